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
import java.util.Arrays;
import java.util.Calendar;

/**
 * The parameters set on a prepared statement, one slot per parameter index, so that they can be set
 * again, with the same setter, on the statement prepared anew on another connection.
 *
 * <p>Recording allocates nothing per setter: a slot is the setter's kind, a {@code long} for a
 * primitive value or a length or SQL type, the value object, and a second object for the few setters
 * that take one (a {@code Calendar}, a type name, an {@link SQLType}). The arrays grow with the
 * highest index set. Objects are kept by reference, as the driver keeps them until it sends them:
 * a stream that an execution already consumed is consumed for the replay too. Not thread-safe.
 */
final class ParameterValues {
    static final byte NULL = 1;
    static final byte NULL_TYPE_NAME = 2;
    static final byte BOOLEAN = 3;
    static final byte BYTE = 4;
    static final byte SHORT = 5;
    static final byte INT = 6;
    static final byte LONG = 7;
    static final byte FLOAT = 8;
    static final byte DOUBLE = 9;
    static final byte BIG_DECIMAL = 10;
    static final byte STRING = 11;
    static final byte BYTES = 12;
    static final byte DATE = 13;
    static final byte DATE_CALENDAR = 14;
    static final byte TIME = 15;
    static final byte TIME_CALENDAR = 16;
    static final byte TIMESTAMP = 17;
    static final byte TIMESTAMP_CALENDAR = 18;
    static final byte ASCII_STREAM_INT = 19;
    static final byte ASCII_STREAM_LONG = 20;
    static final byte ASCII_STREAM = 21;
    static final byte UNICODE_STREAM = 22;
    static final byte BINARY_STREAM_INT = 23;
    static final byte BINARY_STREAM_LONG = 24;
    static final byte BINARY_STREAM = 25;
    static final byte OBJECT_TYPE = 26;
    static final byte OBJECT = 27;
    static final byte OBJECT_TYPE_SCALE = 28;
    static final byte OBJECT_SQL_TYPE_SCALE = 29;
    static final byte OBJECT_SQL_TYPE = 30;
    static final byte CHARACTER_STREAM_INT = 31;
    static final byte CHARACTER_STREAM_LONG = 32;
    static final byte CHARACTER_STREAM = 33;
    static final byte REF = 34;
    static final byte BLOB = 35;
    static final byte BLOB_STREAM_LONG = 36;
    static final byte BLOB_STREAM = 37;
    static final byte CLOB = 38;
    static final byte CLOB_READER_LONG = 39;
    static final byte CLOB_READER = 40;
    static final byte ARRAY = 41;
    static final byte URL_VALUE = 42;
    static final byte ROW_ID = 43;
    static final byte NSTRING = 44;
    static final byte NCHARACTER_STREAM_LONG = 45;
    static final byte NCHARACTER_STREAM = 46;
    static final byte NCLOB = 47;
    static final byte NCLOB_READER_LONG = 48;
    static final byte NCLOB_READER = 49;
    static final byte SQLXML_VALUE = 50;

    /** Enough for most statements Hibernate reads with (by id, by a foreign key, a few conditions). */
    private static final int INITIAL_SLOTS = 4;

    /** The setter of each slot (index 0 is parameter 1); 0 for a parameter not set. */
    private byte[] kinds;

    private long[] numbers;
    private Object[] values;
    /** The second object of the setters that take one; allocated at the first such setter. */
    private Object[] extras;
    /** One past the highest slot set. */
    private int size;

    /** Records parameter {@code index} (from 1) as set by the setter {@code kind}. */
    void set(int index, byte kind, long number, Object value, Object extra) {
        final int slot = index - 1;
        if (slot < 0) {
            return; // the driver refused it already
        }
        if (kinds == null) {
            final int capacity = Math.max(INITIAL_SLOTS, index);
            kinds = new byte[capacity];
            numbers = new long[capacity];
            values = new Object[capacity];
        } else if (slot >= kinds.length) {
            final int capacity = Math.max(kinds.length * 2, index);
            kinds = Arrays.copyOf(kinds, capacity);
            numbers = Arrays.copyOf(numbers, capacity);
            values = Arrays.copyOf(values, capacity);
            if (extras != null) {
                extras = Arrays.copyOf(extras, capacity);
            }
        }
        kinds[slot] = kind;
        numbers[slot] = number;
        values[slot] = value;
        if (extra != null) {
            if (extras == null) {
                extras = new Object[kinds.length];
            }
            extras[slot] = extra;
        } else if (extras != null) {
            extras[slot] = null;
        }
        if (index > size) {
            size = index;
        }
    }

    /** {@code clearParameters()}: nothing is set. */
    void clear() {
        if (kinds != null) {
            Arrays.fill(kinds, 0, size, (byte) 0);
            Arrays.fill(values, 0, size, null);
            if (extras != null) {
                Arrays.fill(extras, 0, size, null);
            }
        }
        size = 0;
    }

    /** A copy, for one entry of a batch. */
    ParameterValues copy() {
        final ParameterValues copy = new ParameterValues();
        if (kinds != null) {
            copy.kinds = Arrays.copyOf(kinds, size);
            copy.numbers = Arrays.copyOf(numbers, size);
            copy.values = Arrays.copyOf(values, size);
            copy.extras = extras == null ? null : Arrays.copyOf(extras, size);
            copy.size = size;
        }
        return copy;
    }

    /** Sets every recorded parameter on {@code target}, with the setter it was set with. */
    void applyTo(PreparedStatement target) throws SQLException {
        for (int slot = 0; slot < size; slot++) {
            if (kinds[slot] != 0) {
                apply(target, slot + 1, kinds[slot], numbers[slot], values[slot], extras == null ? null : extras[slot]);
            }
        }
    }

    private static void apply(PreparedStatement t, int i, byte kind, long n, Object v, Object x) throws SQLException {
        switch (kind) {
            case NULL -> t.setNull(i, (int) n);
            case NULL_TYPE_NAME -> t.setNull(i, (int) n, (String) x);
            case BOOLEAN -> t.setBoolean(i, n != 0);
            case BYTE -> t.setByte(i, (byte) n);
            case SHORT -> t.setShort(i, (short) n);
            case INT -> t.setInt(i, (int) n);
            case LONG -> t.setLong(i, n);
            case FLOAT -> t.setFloat(i, Float.intBitsToFloat((int) n));
            case DOUBLE -> t.setDouble(i, Double.longBitsToDouble(n));
            case BIG_DECIMAL -> t.setBigDecimal(i, (BigDecimal) v);
            case STRING -> t.setString(i, (String) v);
            case BYTES -> t.setBytes(i, (byte[]) v);
            case DATE -> t.setDate(i, (Date) v);
            case DATE_CALENDAR -> t.setDate(i, (Date) v, (Calendar) x);
            case TIME -> t.setTime(i, (Time) v);
            case TIME_CALENDAR -> t.setTime(i, (Time) v, (Calendar) x);
            case TIMESTAMP -> t.setTimestamp(i, (Timestamp) v);
            case TIMESTAMP_CALENDAR -> t.setTimestamp(i, (Timestamp) v, (Calendar) x);
            case ASCII_STREAM_INT -> t.setAsciiStream(i, (InputStream) v, (int) n);
            case ASCII_STREAM_LONG -> t.setAsciiStream(i, (InputStream) v, n);
            case ASCII_STREAM -> t.setAsciiStream(i, (InputStream) v);
            case UNICODE_STREAM -> unicodeStream(t, i, (InputStream) v, (int) n);
            case BINARY_STREAM_INT -> t.setBinaryStream(i, (InputStream) v, (int) n);
            case BINARY_STREAM_LONG -> t.setBinaryStream(i, (InputStream) v, n);
            case BINARY_STREAM -> t.setBinaryStream(i, (InputStream) v);
            case OBJECT_TYPE -> t.setObject(i, v, (int) n);
            case OBJECT -> t.setObject(i, v);
            case OBJECT_TYPE_SCALE -> t.setObject(i, v, (int) (n >> 32), (int) n);
            case OBJECT_SQL_TYPE_SCALE -> t.setObject(i, v, (SQLType) x, (int) n);
            case OBJECT_SQL_TYPE -> t.setObject(i, v, (SQLType) x);
            case CHARACTER_STREAM_INT -> t.setCharacterStream(i, (Reader) v, (int) n);
            case CHARACTER_STREAM_LONG -> t.setCharacterStream(i, (Reader) v, n);
            case CHARACTER_STREAM -> t.setCharacterStream(i, (Reader) v);
            case REF -> t.setRef(i, (Ref) v);
            case BLOB -> t.setBlob(i, (Blob) v);
            case BLOB_STREAM_LONG -> t.setBlob(i, (InputStream) v, n);
            case BLOB_STREAM -> t.setBlob(i, (InputStream) v);
            case CLOB -> t.setClob(i, (Clob) v);
            case CLOB_READER_LONG -> t.setClob(i, (Reader) v, n);
            case CLOB_READER -> t.setClob(i, (Reader) v);
            case ARRAY -> t.setArray(i, (Array) v);
            case URL_VALUE -> t.setURL(i, (URL) v);
            case ROW_ID -> t.setRowId(i, (RowId) v);
            case NSTRING -> t.setNString(i, (String) v);
            case NCHARACTER_STREAM_LONG -> t.setNCharacterStream(i, (Reader) v, n);
            case NCHARACTER_STREAM -> t.setNCharacterStream(i, (Reader) v);
            case NCLOB -> t.setNClob(i, (NClob) v);
            case NCLOB_READER_LONG -> t.setNClob(i, (Reader) v, n);
            case NCLOB_READER -> t.setNClob(i, (Reader) v);
            case SQLXML_VALUE -> t.setSQLXML(i, (SQLXML) v);
            default -> throw new IllegalStateException("Unknown parameter setter " + kind);
        }
    }

    @SuppressWarnings("deprecation")
    private static void unicodeStream(PreparedStatement t, int i, InputStream v, int length) throws SQLException {
        t.setUnicodeStream(i, v, length);
    }
}
