package io.github.hibernaterouting.routing.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;

/**
 * A prepared statement that tells its {@link RoutingConnection} when it is given a fetch size, and
 * otherwise passes every call through unchanged.
 *
 * <p>Only statements for a read-write transaction's reads on a replica are watched (see
 * {@code RoutingConnection.replicaTransactionNeeded}): those run in auto-commit until a fetch size
 * asks for a cursor, which pgjdbc only opens inside a transaction.
 */
final class FetchSizeWatch implements InvocationHandler {
	private static final Class<?>[] INTERFACES = { PreparedStatement.class };

	private final PreparedStatement statement;
	private final RoutingConnection connection;
	private final Connection physical;

	private FetchSizeWatch(PreparedStatement statement, RoutingConnection connection, Connection physical) {
		this.statement = statement;
		this.connection = connection;
		this.physical = physical;
	}

	static PreparedStatement watch(PreparedStatement statement, RoutingConnection connection, Connection physical) {
		return (PreparedStatement) Proxy.newProxyInstance( FetchSizeWatch.class.getClassLoader(), INTERFACES,
				new FetchSizeWatch( statement, connection, physical ) );
	}

	@Override
	public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
		final String name = method.getName();
		if ( args != null && args.length == 1 ) {
			if ( name.equals( "setFetchSize" ) && (Integer) args[0] > 0 ) {
				connection.replicaCursorWanted( physical );
			}
			else if ( name.equals( "equals" ) ) {
				return proxy == args[0];
			}
		}
		else if ( args == null && name.equals( "hashCode" ) ) {
			return System.identityHashCode( proxy );
		}
		try {
			return method.invoke( statement, args );
		}
		catch (InvocationTargetException e) {
			throw e.getCause();
		}
	}
}
