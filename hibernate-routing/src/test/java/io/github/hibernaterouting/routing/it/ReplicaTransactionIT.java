package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.routing.it.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.routing.it.RoutingTestSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingTestSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;

import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.jpa.HibernateHints;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;

/**
 * What a transaction leaves open on the replica it reads from, asked of the standby itself: the
 * state {@code pg_stat_activity} reports for the backend that served the reads. A backend inside a
 * transaction block reports {@code idle in transaction} between statements, one in auto-commit
 * {@code idle}; PostgreSQL sets the state before it answers, so the check is exact.
 */
class ReplicaTransactionIT {
	private static final String RR_ROLE = "rr_reader";

	@RegisterExtension
	static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys( 1 );

	static PostgresCluster cluster;
	static EntityManagerFactory emf;

	@BeforeAll
	static void startPersistenceUnit() throws SQLException {
		cluster = DB.cluster();
		createSchema( cluster );
		emf = emf( cluster, Map.of() );
	}

	@AfterAll
	static void closePersistenceUnit() {
		if ( emf != null ) {
			emf.close();
		}
	}

	@BeforeEach
	void emptyTables() throws SQLException {
		onPrimary( cluster, "delete from note" );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		awaitReplicasUp( emf );
	}

	/** The standby backend that serves this EntityManager's next read, and what it reports afterwards. */
	private record Backend(Node node, int pid) {
		String state() throws SQLException {
			try (Connection admin = cluster.adminConnection( node );
					PreparedStatement query = admin.prepareStatement( "select state from pg_stat_activity where pid = ?" )) {
				query.setInt( 1, pid );
				try (ResultSet rs = query.executeQuery()) {
					assertThat( rs.next() ).as( "backend %s on %s", pid, node ).isTrue();
					return rs.getString( 1 );
				}
			}
		}
	}

	private static Backend backend(EntityManager em) {
		final Object[] row = (Object[]) em.createNativeQuery( "select inet_server_port(), pg_backend_pid()" ).getSingleResult();
		final Backend backend = new Backend( cluster.nodeForPort( ( (Number) row[0] ).intValue() ), ( (Number) row[1] ).intValue() );
		assertThat( backend.node().isPrimary() ).as( "read served by a replica" ).isFalse();
		return backend;
	}

	@Test
	void readWriteTransaction_readsOnReplicaWithoutATransactionThere_thenWritesOnPrimary() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Backend replica = backend( em );
			em.createNativeQuery( "select count(*) from note" ).getSingleResult();
			assertThat( replica.state() ).as( "the read-write transaction's reads hold no transaction on the standby" ).isEqualTo( "idle" );
			em.persist( new Note( "after reads" ) );
			em.flush();
			em.getTransaction().commit();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
	}

	@Test
	void readWriteTransaction_rolledBack_afterReadsOnReplica_writesNothing() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			backend( em );
			em.persist( new Note( "rolled back" ) );
			em.flush();
			em.getTransaction().rollback();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isZero();
	}

	@Test
	void fetchSize_opensAReadOnlyTransactionOnTheReplica_soRowsStreamThroughACursor() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Backend replica = backend( em );
			assertThat( replica.state() ).isEqualTo( "idle" );
			@SuppressWarnings("unchecked")
			final Stream<Number> rows = em.createNativeQuery( "select g from generate_series(1, 1000) g" )
					.setHint( HibernateHints.HINT_FETCH_SIZE, 10 )
					.getResultStream();
			try (rows) {
				final Iterator<Number> iterator = rows.iterator();
				assertThat( iterator.next().intValue() ).isEqualTo( 1 );
				// pgjdbc fetched 10 rows through a portal, which only lives inside a transaction.
				assertThat( replica.state() ).isEqualTo( "idle in transaction" );
				long count = 1;
				while ( iterator.hasNext() ) {
					iterator.next();
					count++;
				}
				assertThat( count ).isEqualTo( 1000 );
			}
			em.getTransaction().commit();
			assertThat( replica.state() ).as( "commit ended the replica's transaction too" ).isEqualTo( "idle" );
		}
	}

	@Test
	void readOnlyTransaction_keepsItsTransactionOnTheReplica() throws SQLException {
		final SessionFactory sessionFactory = emf.unwrap( SessionFactory.class );
		try (Session session = sessionFactory.withOptions().readOnly( true ).openSession()) {
			session.beginTransaction();
			final Backend replica = backend( session );
			assertThat( replica.state() ).isEqualTo( "idle in transaction" );
			session.getTransaction().commit();
			assertThat( replica.state() ).isEqualTo( "idle" );
		}
	}

	@Test
	void repeatableRead_keepsOneSnapshotOnTheReplica() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.unwrap( Session.class ).doWork( connection -> connection.setTransactionIsolation( Connection.TRANSACTION_REPEATABLE_READ ) );
			em.getTransaction().begin();
			final Backend replica = backend( em );
			assertThat( replica.state() ).isEqualTo( "idle in transaction" );
			em.getTransaction().commit();
		}
	}

	@Test
	void roleWhoseDefaultIsRepeatableRead_keepsATransactionOnTheReplica() throws SQLException {
		try (Connection admin = cluster.adminConnection( cluster.primary() ); Statement s = admin.createStatement()) {
			s.execute( "drop role if exists " + RR_ROLE );
			s.execute( "create role " + RR_ROLE + " login password 'rr-secret'" );
			s.execute( "alter role " + RR_ROLE + " set default_transaction_isolation = 'repeatable read'" );
			s.execute( "grant select on note to " + RR_ROLE );
		}
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		final EntityManagerFactory rr = emf( cluster, Map.of( "jakarta.persistence.jdbc.user", RR_ROLE,
				"jakarta.persistence.jdbc.password", "rr-secret" ) );
		try (rr) {
			awaitReplicasUp( rr );
			try (EntityManager em = rr.createEntityManager()) {
				em.getTransaction().begin();
				final Backend replica = backend( em );
				assertThat( replica.state() ).isEqualTo( "idle in transaction" );
				final Object isolation = em.createNativeQuery( "select current_setting('transaction_isolation')" ).getSingleResult();
				assertThat( isolation ).isEqualTo( "repeatable read" );
				em.getTransaction().commit();
			}
		}
	}
}
