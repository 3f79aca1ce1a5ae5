package io.github.hibernaterouting.routing.it;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;


import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;

/** Builds persistence units on the test cluster and tells which node served a statement. */
public final class RoutingTestSupport {
	private RoutingTestSupport() {
	}

	public static void createSchema(PostgresCluster cluster) throws SQLException {
		try (Connection c = cluster.connect( cluster.primary() ); Statement s = c.createStatement()) {
			s.execute( "drop table if exists account, note cascade" );
			s.execute( "drop sequence if exists account_seq, note_seq" );
			s.execute( "create sequence account_seq start 1 increment 50" );
			s.execute( "create sequence note_seq start 1 increment 50" );
			s.execute( "create table account (id bigint primary key, name text, balance int not null, version bigint not null)" );
			s.execute( "create table note (id bigint primary key, text text)" );
		}
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
	}

	/** Base settings: the cluster's primary and every standby as replicas; {@code overrides} win. */
	public static Map<String, Object> settings(PostgresCluster cluster, Map<String, ?> overrides) {
		final Map<String, Object> settings = cluster.persistenceProperties();
		settings.put( RoutingSettings.HEALTH_CHECK_INTERVAL, "100ms" );
		settings.put( RoutingSettings.CIRCUIT_BREAKER_OPEN_DURATION, "200ms" );
		settings.put( RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "5" );
		settings.put( RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "5" );
		settings.put( "hibernate.hbm2ddl.auto", "none" );
		settings.putAll( overrides );
		settings.values().removeIf( v -> v == null );
		return settings;
	}

	public static EntityManagerFactory emf(PostgresCluster cluster, Map<String, ?> overrides) {
		final PersistenceConfiguration configuration = new PersistenceConfiguration( "routing-it" )
				.managedClass( Account.class )
				.managedClass( Note.class );
		settings( cluster, overrides ).forEach( configuration::property );
		return configuration.createEntityManagerFactory();
	}

	public static RoutingRuntime runtime(EntityManagerFactory emf) {
		return RoutingRuntime.of( emf );
	}

	/** Waits until the persistence unit sees every replica up again (after a test stopped one). */
	public static void awaitReplicasUp(EntityManagerFactory emf) {
		final RoutingRuntime runtime = runtime( emf );
		final long deadline = System.nanoTime() + Duration.ofSeconds( 30 ).toNanos();
		runtime.checkReplicasNow();
		while ( !runtime.replicas().stream().allMatch( replica -> replica.isUp() ) ) {
			if ( System.nanoTime() > deadline ) {
				throw new AssertionError( "replicas not up after 30s: " + runtime.replicas() );
			}
			runtime.checkReplicasNow();
			Thread.onSpinWait();
		}
	}

	/** The node that runs the next statement of this EntityManager, asked of the server itself. */
	public static Node servedBy(PostgresCluster cluster, EntityManager em) {
		final Number port = (Number) em.createNativeQuery( "select inet_server_port()" ).getSingleResult();
		return cluster.nodeForPort( port.intValue() );
	}

	/** Runs SQL on the primary directly, bypassing the library (to change data behind a replica's back). */
	public static void onPrimary(PostgresCluster cluster, String sql) throws SQLException {
		try (Connection c = cluster.connect( cluster.primary() ); Statement s = c.createStatement()) {
			s.execute( sql );
		}
	}

	public static long countOnPrimary(PostgresCluster cluster, String table) throws SQLException {
		try (Connection c = cluster.connect( cluster.primary() ); Statement s = c.createStatement();
				var rs = s.executeQuery( "select count(*) from " + table )) {
			rs.next();
			return rs.getLong( 1 );
		}
	}
}
