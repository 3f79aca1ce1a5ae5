package io.github.hibernaterouting.routing.internal.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;

/**
 * A forwarding prepared statement that also records the parameters set on it
 * ({@link ParameterValues}) and its batch ({@link StatementState}), each after the wrapped statement
 * accepted it; the subclass records the statement's properties. Each record is created at the first
 * setter that needs it. {@link RoutedStatement} replays the record on the statement it
 * prepares anew when the unit of work moved to another connection.
 */
@SuppressWarnings("deprecation")
abstract class RecordingPreparedStatement extends ForwardingPreparedStatement {
    /** The parameters set; null until the first. */
    ParameterValues parameters;
    /** The batch and the properties set; null until the first. */
    StatementState state;

    RecordingPreparedStatement(PreparedStatement delegate) {
        super(delegate);
    }

    final StatementState state() {
        StatementState current = state;
        if (current == null) {
            current = state = new StatementState();
        }
        return current;
    }

    private void parameter(int index, byte kind, long number, Object value, Object extra) {
        ParameterValues current = parameters;
        if (current == null) {
            current = parameters = new ParameterValues();
        }
        current.set(index, kind, number, value, extra);
    }

    @Override
    public void clearParameters() throws SQLException {
        delegate.clearParameters();
        if (parameters != null) {
            parameters.clear();
        }
    }

    @Override
    public void addBatch() throws SQLException {
        delegate.addBatch();
        state().addBatch(parameters);
    }

    @Override
    public void clearBatch() throws SQLException {
        delegate.clearBatch();
        if (state != null) {
            state.clearBatch();
        }
    }

    @Override
    public void closeOnCompletion() throws SQLException {
        delegate.closeOnCompletion();
        state().closeOnCompletion();
    }

    @Override
    public void setArray(int parameterIndex, Array value) throws SQLException {
        delegate.setArray(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.ARRAY, 0, value, null);
    }

    @Override
    public void setAsciiStream(int parameterIndex, InputStream value, int length) throws SQLException {
        delegate.setAsciiStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.ASCII_STREAM_INT, length, value, null);
    }

    @Override
    public void setAsciiStream(int parameterIndex, InputStream value, long length) throws SQLException {
        delegate.setAsciiStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.ASCII_STREAM_LONG, length, value, null);
    }

    @Override
    public void setAsciiStream(int parameterIndex, InputStream value) throws SQLException {
        delegate.setAsciiStream(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.ASCII_STREAM, 0, value, null);
    }

    @Override
    public void setBigDecimal(int parameterIndex, BigDecimal value) throws SQLException {
        delegate.setBigDecimal(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BIG_DECIMAL, 0, value, null);
    }

    @Override
    public void setBinaryStream(int parameterIndex, InputStream value, int length) throws SQLException {
        delegate.setBinaryStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.BINARY_STREAM_INT, length, value, null);
    }

    @Override
    public void setBinaryStream(int parameterIndex, InputStream value, long length) throws SQLException {
        delegate.setBinaryStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.BINARY_STREAM_LONG, length, value, null);
    }

    @Override
    public void setBinaryStream(int parameterIndex, InputStream value) throws SQLException {
        delegate.setBinaryStream(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BINARY_STREAM, 0, value, null);
    }

    @Override
    public void setBlob(int parameterIndex, InputStream value, long length) throws SQLException {
        delegate.setBlob(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.BLOB_STREAM_LONG, length, value, null);
    }

    @Override
    public void setBlob(int parameterIndex, InputStream value) throws SQLException {
        delegate.setBlob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BLOB_STREAM, 0, value, null);
    }

    @Override
    public void setBlob(int parameterIndex, Blob value) throws SQLException {
        delegate.setBlob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BLOB, 0, value, null);
    }

    @Override
    public void setBoolean(int parameterIndex, boolean value) throws SQLException {
        delegate.setBoolean(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BOOLEAN, value ? 1 : 0, null, null);
    }

    @Override
    public void setByte(int parameterIndex, byte value) throws SQLException {
        delegate.setByte(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BYTE, value, null, null);
    }

    @Override
    public void setBytes(int parameterIndex, byte[] value) throws SQLException {
        delegate.setBytes(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.BYTES, 0, value, null);
    }

    @Override
    public void setCharacterStream(int parameterIndex, Reader value, int length) throws SQLException {
        delegate.setCharacterStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.CHARACTER_STREAM_INT, length, value, null);
    }

    @Override
    public void setCharacterStream(int parameterIndex, Reader value, long length) throws SQLException {
        delegate.setCharacterStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.CHARACTER_STREAM_LONG, length, value, null);
    }

    @Override
    public void setCharacterStream(int parameterIndex, Reader value) throws SQLException {
        delegate.setCharacterStream(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.CHARACTER_STREAM, 0, value, null);
    }

    @Override
    public void setClob(int parameterIndex, Reader value, long length) throws SQLException {
        delegate.setClob(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.CLOB_READER_LONG, length, value, null);
    }

    @Override
    public void setClob(int parameterIndex, Reader value) throws SQLException {
        delegate.setClob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.CLOB_READER, 0, value, null);
    }

    @Override
    public void setClob(int parameterIndex, Clob value) throws SQLException {
        delegate.setClob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.CLOB, 0, value, null);
    }

    @Override
    public void setDate(int parameterIndex, Date value, Calendar calendar) throws SQLException {
        delegate.setDate(parameterIndex, value, calendar);
        parameter(parameterIndex, ParameterValues.DATE_CALENDAR, 0, value, calendar);
    }

    @Override
    public void setDate(int parameterIndex, Date value) throws SQLException {
        delegate.setDate(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.DATE, 0, value, null);
    }

    @Override
    public void setDouble(int parameterIndex, double value) throws SQLException {
        delegate.setDouble(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.DOUBLE, Double.doubleToRawLongBits(value), null, null);
    }

    @Override
    public void setFloat(int parameterIndex, float value) throws SQLException {
        delegate.setFloat(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.FLOAT, Float.floatToRawIntBits(value), null, null);
    }

    @Override
    public void setInt(int parameterIndex, int value) throws SQLException {
        delegate.setInt(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.INT, value, null, null);
    }

    @Override
    public void setLong(int parameterIndex, long value) throws SQLException {
        delegate.setLong(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.LONG, value, null, null);
    }

    @Override
    public void setNCharacterStream(int parameterIndex, Reader value, long length) throws SQLException {
        delegate.setNCharacterStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.NCHARACTER_STREAM_LONG, length, value, null);
    }

    @Override
    public void setNCharacterStream(int parameterIndex, Reader value) throws SQLException {
        delegate.setNCharacterStream(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.NCHARACTER_STREAM, 0, value, null);
    }

    @Override
    public void setNClob(int parameterIndex, Reader value, long length) throws SQLException {
        delegate.setNClob(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.NCLOB_READER_LONG, length, value, null);
    }

    @Override
    public void setNClob(int parameterIndex, Reader value) throws SQLException {
        delegate.setNClob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.NCLOB_READER, 0, value, null);
    }

    @Override
    public void setNClob(int parameterIndex, NClob value) throws SQLException {
        delegate.setNClob(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.NCLOB, 0, value, null);
    }

    @Override
    public void setNString(int parameterIndex, String value) throws SQLException {
        delegate.setNString(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.NSTRING, 0, value, null);
    }

    @Override
    public void setNull(int parameterIndex, int sqlType, String typeName) throws SQLException {
        delegate.setNull(parameterIndex, sqlType, typeName);
        parameter(parameterIndex, ParameterValues.NULL_TYPE_NAME, sqlType, null, typeName);
    }

    @Override
    public void setNull(int parameterIndex, int sqlType) throws SQLException {
        delegate.setNull(parameterIndex, sqlType);
        parameter(parameterIndex, ParameterValues.NULL, sqlType, null, null);
    }

    @Override
    public void setObject(int parameterIndex, Object value, int targetSqlType, int scaleOrLength) throws SQLException {
        delegate.setObject(parameterIndex, value, targetSqlType, scaleOrLength);
        parameter(
                parameterIndex,
                ParameterValues.OBJECT_TYPE_SCALE,
                (long) targetSqlType << 32 | (scaleOrLength & 0xFFFFFFFFL),
                value,
                null);
    }

    @Override
    public void setObject(int parameterIndex, Object value, int targetSqlType) throws SQLException {
        delegate.setObject(parameterIndex, value, targetSqlType);
        parameter(parameterIndex, ParameterValues.OBJECT_TYPE, targetSqlType, value, null);
    }

    @Override
    public void setObject(int parameterIndex, Object value, SQLType targetType, int scaleOrLength) throws SQLException {
        delegate.setObject(parameterIndex, value, targetType, scaleOrLength);
        parameter(parameterIndex, ParameterValues.OBJECT_SQL_TYPE_SCALE, scaleOrLength, value, targetType);
    }

    @Override
    public void setObject(int parameterIndex, Object value, SQLType targetType) throws SQLException {
        delegate.setObject(parameterIndex, value, targetType);
        parameter(parameterIndex, ParameterValues.OBJECT_SQL_TYPE, 0, value, targetType);
    }

    @Override
    public void setObject(int parameterIndex, Object value) throws SQLException {
        delegate.setObject(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.OBJECT, 0, value, null);
    }

    @Override
    public void setRef(int parameterIndex, Ref value) throws SQLException {
        delegate.setRef(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.REF, 0, value, null);
    }

    @Override
    public void setRowId(int parameterIndex, RowId value) throws SQLException {
        delegate.setRowId(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.ROW_ID, 0, value, null);
    }

    @Override
    public void setSQLXML(int parameterIndex, SQLXML value) throws SQLException {
        delegate.setSQLXML(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.SQLXML_VALUE, 0, value, null);
    }

    @Override
    public void setShort(int parameterIndex, short value) throws SQLException {
        delegate.setShort(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.SHORT, value, null, null);
    }

    @Override
    public void setString(int parameterIndex, String value) throws SQLException {
        delegate.setString(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.STRING, 0, value, null);
    }

    @Override
    public void setTime(int parameterIndex, Time value, Calendar calendar) throws SQLException {
        delegate.setTime(parameterIndex, value, calendar);
        parameter(parameterIndex, ParameterValues.TIME_CALENDAR, 0, value, calendar);
    }

    @Override
    public void setTime(int parameterIndex, Time value) throws SQLException {
        delegate.setTime(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.TIME, 0, value, null);
    }

    @Override
    public void setTimestamp(int parameterIndex, Timestamp value, Calendar calendar) throws SQLException {
        delegate.setTimestamp(parameterIndex, value, calendar);
        parameter(parameterIndex, ParameterValues.TIMESTAMP_CALENDAR, 0, value, calendar);
    }

    @Override
    public void setTimestamp(int parameterIndex, Timestamp value) throws SQLException {
        delegate.setTimestamp(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.TIMESTAMP, 0, value, null);
    }

    @Override
    public void setURL(int parameterIndex, URL value) throws SQLException {
        delegate.setURL(parameterIndex, value);
        parameter(parameterIndex, ParameterValues.URL_VALUE, 0, value, null);
    }

    @Override
    public void setUnicodeStream(int parameterIndex, InputStream value, int length) throws SQLException {
        delegate.setUnicodeStream(parameterIndex, value, length);
        parameter(parameterIndex, ParameterValues.UNICODE_STREAM, length, value, null);
    }
}
