package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.LockModeType;
import jakarta.persistence.OptimisticLockException;

import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.jpa.HibernateHints;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.hibernaterouting.routing.ReplicaWriteException;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;

/**
 * Routing inside Hibernate against a real primary and two streaming hot standbys. Every test asks
 * the server which node ran a statement ({@code inet_server_port()}), or makes the answer visible
 * in the data by pausing replay on the standbys and changing a row on the primary behind their back.
 */
@ExtendWith(RoutingLeakCheck.class)
class RoutingIT {
	@RegisterExtension
	static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys( 2 );

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
		onPrimary( cluster, "delete from account; delete from note" );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		awaitReplicasUp( emf );
	}

	private long createAccount(String name, int balance) {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Account account = new Account( name, balance );
			em.persist( account );
			em.getTransaction().commit();
			return account.id;
		}
	}

	private long createNote(String text) {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Note note = new Note( text );
			em.persist( note );
			em.getTransaction().commit();
			return note.id;
		}
	}

	private void pauseAllStandbys() {
		cluster.standbys().forEach( cluster::pauseReplay );
	}

	@Test
	void readOutsideTransaction_goesToReplica() {
		try (EntityManager em = emf.createEntityManager()) {
			assertThat( servedBy( cluster, em ).isPrimary() ).isFalse();
		}
	}

	@Test
	void entityRead_isServedByReplica_evenWhenPrimaryHasNewerData() throws SQLException {
		final long id = createAccount( "before", 10 );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		pauseAllStandbys();
		onPrimary( cluster, "update account set name = 'after' where id = " + id );
		try (EntityManager em = emf.createEntityManager()) {
			assertThat( em.find( Account.class, id ).name ).isEqualTo( "before" );
		}
	}

	@Test
	void write_goesToPrimary_andLaterReadsInTheSameSessionToo() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			em.persist( new Note( "written" ) );
			em.flush();
			assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
			em.getTransaction().commit();
			assertThat( servedBy( cluster, em ).isPrimary() ).as( "read after commit in the same session" ).isTrue();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
		try (EntityManager fresh = emf.createEntityManager()) {
			assertThat( servedBy( cluster, fresh ).isPrimary() ).as( "a new session starts on a replica" ).isFalse();
		}
	}

	@Test
	void lazyTransaction_readsOnReplica_thenMovesToPrimaryAtFirstWrite() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			assertThat( servedBy( cluster, em ).isPrimary() ).as( "first read of the transaction" ).isFalse();
			em.persist( new Note( "lazy" ) );
			em.flush();
			assertThat( servedBy( cluster, em ).isPrimary() ).as( "read after the write, same transaction" ).isTrue();
			em.getTransaction().commit();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
	}

	@Test
	void primaryTransactionMode_pinsReadWriteTransactionsToPrimaryFromBegin() {
		final EntityManagerFactory pinned = emf( cluster, Map.of( RoutingSettings.TRANSACTIONS, "PRIMARY" ) );
		try (pinned; EntityManager em = pinned.createEntityManager()) {
			em.getTransaction().begin();
			assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
			em.getTransaction().commit();
			assertThat( servedBy( cluster, em ).isPrimary() ).as( "outside a transaction reads still use replicas" ).isFalse();
		}
	}

	@Test
	void lockingRead_goesToPrimary() {
		final long id = createAccount( "locked", 1 );
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			// A hot standby refuses SELECT ... FOR UPDATE, so success proves the primary ran it.
			final Account account = em.find( Account.class, id, LockModeType.PESSIMISTIC_WRITE );
			assertThat( account ).isNotNull();
			assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
			em.getTransaction().commit();
		}
		try (EntityManager em = emf.createEntityManager()) {
			final List<?> locked = em.createNativeQuery( "select id from account where id = " + id + " for no key update" ).getResultList();
			assertThat( locked ).hasSize( 1 );
		}
	}

	@Test
	void sequenceFetch_goesToPrimary() {
		try (EntityManager em = emf.createEntityManager()) {
			final Number first = (Number) em.createNativeQuery( "select nextval('note_seq')" ).getSingleResult();
			final Number second = (Number) em.createNativeQuery( "select nextval('note_seq')" ).getSingleResult();
			assertThat( second.longValue() ).isGreaterThan( first.longValue() );
		}
	}

	@Test
	void dataModifyingCte_goesToPrimary() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Object id = em.createNativeQuery(
					"with ins as (insert into note (id, text) values (nextval('note_seq'), 'cte') returning id) select id from ins" )
					.getSingleResult();
			em.getTransaction().commit();
			assertThat( id ).isNotNull();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
	}

	@Test
	void nativeExecuteUpdate_goesToPrimary_andEscalatesTheSession() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final int rows = em.createNativeQuery( "insert into note (id, text) values (nextval('note_seq'), 'native')" ).executeUpdate();
			em.getTransaction().commit();
			assertThat( rows ).isEqualTo( 1 );
			assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
	}

	@Test
	void rawJdbcStatementInDoWork_goesToPrimary() {
		try (EntityManager em = emf.createEntityManager()) {
			final int[] port = new int[1];
			em.unwrap( Session.class ).doWork( connection -> {
				try (var statement = connection.createStatement(); var rs = statement.executeQuery( "select inet_server_port()" )) {
					rs.next();
					port[0] = rs.getInt( 1 );
				}
			} );
			assertThat( cluster.nodeForPort( port[0] ).isPrimary() ).isTrue();
		}
	}

	@Test
	void replicaStrategy_write_failsLoudly_andWritesNothing() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.setProperty( RoutingSettings.STRATEGY, Strategy.REPLICA );
			assertThat( servedBy( cluster, em ).isPrimary() ).isFalse();
			em.getTransaction().begin();
			assertThat( thrownBy( () -> em.createNativeQuery( "insert into note (id, text) values (1, 'forbidden')" ).executeUpdate() ) )
					.isInstanceOf( ReplicaWriteException.class )
					.hasMessageContaining( "REPLICA" ).hasMessageContaining( "Strategy.PRIMARY" ).hasMessageContaining( "nothing was sent" );
			em.getTransaction().rollback();
		}
		try (EntityManager em = emf.createEntityManager()) {
			em.setProperty( RoutingSettings.STRATEGY, "replica" );
			em.getTransaction().begin();
			assertThat( thrownBy( () -> {
				em.persist( new Note( "forbidden" ) );
				em.flush();
			} ) ).isInstanceOf( ReplicaWriteException.class );
			em.getTransaction().rollback();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isZero();
	}

	@Test
	void strategyLevels_mostSpecificWins() throws SQLException {
		final EntityManagerFactory primaryByDefault = emf( cluster, Map.of( RoutingSettings.STRATEGY, "PRIMARY" ) );
		try (primaryByDefault) {
			try (EntityManager em = primaryByDefault.createEntityManager()) {
				assertThat( servedBy( cluster, em ).isPrimary() ).as( "persistence-unit default PRIMARY" ).isTrue();
			}
			try (RoutingScope ignored = RoutingScope.open( Strategy.STALE_READ ); EntityManager em = primaryByDefault.createEntityManager()) {
				assertThat( servedBy( cluster, em ).isPrimary() ).as( "scope STALE_READ beats the default" ).isFalse();
				em.setProperty( RoutingSettings.STRATEGY, "PRIMARY" );
				em.getTransaction().begin(); // session properties are read when a unit of work starts
				assertThat( servedBy( cluster, em ).isPrimary() ).as( "session property PRIMARY beats the scope" ).isTrue();
				final Number port = (Number) em.createNativeQuery( "/*+ " + RoutingHints.strategy( Strategy.REPLICA ) + " */ select inet_server_port()" )
						.getSingleResult();
				assertThat( cluster.nodeForPort( port.intValue() ).isPrimary() )
						.as( "inside a transaction already on the primary, reads stay there" ).isTrue();
				em.getTransaction().commit();
			}
			try (EntityManager em = primaryByDefault.createEntityManager()) {
				em.setProperty( RoutingSettings.STRATEGY, "PRIMARY" );
				final Object port = em.createNativeQuery( "select inet_server_port()" )
						.setHint( RoutingHints.DATABASE_HINT, RoutingHints.strategy( Strategy.STALE_READ ) )
						.getSingleResult();
				assertThat( cluster.nodeForPort( ( (Number) port ).intValue() ).isPrimary() ).as( "query hint beats the session property" ).isFalse();
			}
		}
		// The hint on a JPQL query, seen in the data: replicas are paused and hold the old name.
		final long id = createAccount( "old", 1 );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		pauseAllStandbys();
		onPrimary( cluster, "update account set name = 'new' where id = " + id );
		try (EntityManager em = emf.createEntityManager()) {
			final String jpql = "select a.name from Account a where a.id = :id";
			assertThat( em.createQuery( jpql, String.class ).setParameter( "id", id ).getSingleResult() ).isEqualTo( "old" );
			assertThat( em.createQuery( jpql, String.class ).setParameter( "id", id )
					.setHint( RoutingHints.DATABASE_HINT, RoutingHints.strategy( Strategy.PRIMARY ) )
					.getSingleResult() ).isEqualTo( "new" );
			assertThat( Routing.with( Strategy.PRIMARY, () -> em.createQuery( jpql, String.class ).setParameter( "id", id ).getSingleResult() ) )
					.as( "programmatic scope" ).isEqualTo( "new" );
		}
	}

	@Test
	void writeInScope_sendsLaterSessionsOfThatScopeToPrimary() {
		try (RoutingScope scope = RoutingScope.open( null )) {
			try (EntityManager em = emf.createEntityManager()) {
				assertThat( servedBy( cluster, em ).isPrimary() ).isFalse();
			}
			createNote( "scoped" );
			assertThat( scope.hasWritten() ).isTrue();
			try (EntityManager em = emf.createEntityManager()) {
				assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
			}
		}
		try (EntityManager em = emf.createEntityManager()) {
			assertThat( servedBy( cluster, em ).isPrimary() ).as( "outside the scope" ).isFalse();
		}
	}

	@Test
	void session_keepsOneReplica_soItsReadsNeverGoBackInTime() {
		try (EntityManager em = emf.createEntityManager()) {
			final Set<Node> nodes = new HashSet<>();
			for ( int i = 0; i < 10; i++ ) {
				nodes.add( servedBy( cluster, em ) );
				em.getTransaction().begin();
				nodes.add( servedBy( cluster, em ) );
				em.getTransaction().commit();
			}
			assertThat( nodes ).hasSize( 1 );
			assertThat( nodes.iterator().next().isPrimary() ).isFalse();
		}
		assertThat( servedByFreshSessions( emf, 6 ) ).as( "new sessions are balanced over both replicas" )
				.containsExactlyInAnyOrder( cluster.standby( 1 ), cluster.standby( 2 ) );
	}

	@Test
	void replicaBeyondLagBound_getsNoReads() throws SQLException {
		final EntityManagerFactory bounded = emf( cluster, Map.of( RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB" ) );
		try (bounded) {
			final Node paused = cluster.standby( 1 );
			cluster.pauseReplay( paused );
			onPrimary( cluster, "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 2000)" );
			cluster.awaitReplay( cluster.standby( 2 ), cluster.currentWalLsn(), Duration.ofSeconds( 30 ) );
			runtime( bounded ).checkReplicasNow();
			assertThat( runtime( bounded ).replicas().get( 0 ).lagBytes() ).isGreaterThan( 64 * 1024 );
			assertThat( servedByFreshSessions( bounded, 10 ) ).containsExactly( cluster.standby( 2 ) );
		}
	}

	@Test
	void stoppedReplica_isSkipped_underFallback_andUsedAgainAfterRestart() {
		final EntityManagerFactory own = emf( cluster, Map.of() );
		try (own) {
			cluster.stop( cluster.standby( 1 ) );
			runtime( own ).checkReplicasNow();
			assertThat( servedByFreshSessions( own, 10 ) ).containsExactly( cluster.standby( 2 ) );

			cluster.stop( cluster.standby( 2 ) );
			runtime( own ).checkReplicasNow();
			assertThat( servedByFreshSessions( own, 3 ) ).as( "no replica left: the primary" ).containsExactly( cluster.primary() );

			cluster.start( cluster.standby( 1 ) );
			cluster.start( cluster.standby( 2 ) );
			cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
			// The breaker stays open for its open duration, then the health check's trial closes it.
			awaitReplicasUp( own );
			assertThat( servedByFreshSessions( own, 6 ) ).containsExactlyInAnyOrder( cluster.standby( 1 ), cluster.standby( 2 ) );
		}
	}

	@Test
	void stoppedReplica_surfacesError_underFail() {
		final Map<String, Object> settings = new HashMap<>();
		settings.put( RoutingSettings.REPLICA_URLS, cluster.standby( 1 ).jdbcUrl() );
		settings.put( RoutingSettings.REPLICA_FAILURE, "FAIL" );
		final EntityManagerFactory failing = emf( cluster, settings );
		try (failing) {
			cluster.stop( cluster.standby( 1 ) );
			runtime( failing ).checkReplicasNow();
			try (EntityManager em = failing.createEntityManager()) {
				assertThatThrownBy( () -> servedBy( cluster, em ) )
						.hasStackTraceContaining( "No replica can serve this read (replica-down)" )
						.hasStackTraceContaining( RoutingSettings.REPLICA_FAILURE + "=FAIL" );
			}
		}
	}

	private static Set<Node> servedByFreshSessions(EntityManagerFactory factory, int sessions) {
		final Set<Node> nodes = new HashSet<>();
		for ( int i = 0; i < sessions; i++ ) {
			try (EntityManager em = factory.createEntityManager()) {
				nodes.add( servedBy( cluster, em ) );
			}
		}
		return nodes;
	}

	/** What {@code work} threw; fails the test if it threw nothing. */
	private static Throwable thrownBy(Runnable work) {
		try {
			work.run();
		}
		catch (RuntimeException e) {
			return e;
		}
		throw new AssertionError( "expected an exception" );
	}

	@Test
	void staleReplicaRead_thenUpdate_ofVersionedEntity_failsWithOptimisticLock() throws SQLException {
		final long id = createAccount( "versioned", 100 );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		pauseAllStandbys();
		onPrimary( cluster, "update account set balance = 500, version = version + 1 where id = " + id );
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Account stale = em.find( Account.class, id );
			assertThat( stale.balance ).as( "read from a paused replica" ).isEqualTo( 100 );
			stale.balance = 150;
			assertThatThrownBy( () -> em.getTransaction().commit() ).hasCauseInstanceOf( OptimisticLockException.class );
		}
		assertThat( balanceOnPrimary( id ) ).isEqualTo( 500 );
	}

	@Test
	void staleReplicaRead_thenUpdate_ofUnversionedEntity_failsNamingEntityAndFixes() throws SQLException {
		final long id = createNote( "a" );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		pauseAllStandbys();
		onPrimary( cluster, "update note set text = 'b' where id = " + id );
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Note stale = em.find( Note.class, id );
			assertThat( stale.text ).isEqualTo( "a" );
			stale.text = "c";
			assertThatThrownBy( () -> em.getTransaction().commit() )
					.hasCauseInstanceOf( OptimisticLockException.class )
					.hasRootCauseInstanceOf( StaleReplicaReadException.class )
					.rootCause().hasMessageContaining( Note.class.getName() ).hasMessageContaining( "@Version" )
					.hasMessageContaining( "Strategy.PRIMARY" ).hasMessageContaining( "text" );
		}
		assertThat( textOnPrimary( id ) ).isEqualTo( "b" );

		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			em.remove( em.find( Note.class, id ) );
			assertThatThrownBy( () -> em.getTransaction().commit() ).hasRootCauseInstanceOf( StaleReplicaReadException.class );
		}
		assertThat( textOnPrimary( id ) ).as( "a stale delete is refused too" ).isEqualTo( "b" );
	}

	@Test
	void replicaRead_thenUpdate_ofUnversionedEntity_succeedsWhenPrimaryIsUnchanged() throws SQLException {
		final long id = createNote( "a" );
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Note note = em.find( Note.class, id );
			note.text = "c";
			em.getTransaction().commit();
		}
		assertThat( textOnPrimary( id ) ).isEqualTo( "c" );
	}

	@Test
	void routingStatus_countsStatementsPerNode_evenWithoutAMeterRegistry() {
		final io.github.hibernaterouting.routing.RoutingStatus before = io.github.hibernaterouting.routing.RoutingStatus.of( emf );
		final Set<Node> served = servedByFreshSessions( emf, 4 );
		createNote( "counted" );
		final io.github.hibernaterouting.routing.RoutingStatus after = io.github.hibernaterouting.routing.RoutingStatus.of( emf );
		final long replicaReadsBefore = before.nodes().stream().filter( n -> !n.primary() ).mapToLong( n -> n.reads() ).sum();
		final long replicaReadsAfter = after.nodes().stream().filter( n -> !n.primary() ).mapToLong( n -> n.reads() ).sum();
		assertThat( served ).noneMatch( Node::isPrimary );
		assertThat( replicaReadsAfter - replicaReadsBefore ).as( "this persistence unit uses the global registry, which counts nothing" )
				.isGreaterThanOrEqualTo( 4 );
		assertThat( after.nodes().get( 0 ).writes() ).isGreaterThan( before.nodes().get( 0 ).writes() );
		assertThat( after.decisions() ).isNotEmpty();
		assertThat( after.decisions().get( 0 ).reason() ).isIn( "write", "escalated", "transaction" );
	}

	@Test
	void hibernateReadOnlySession_goesToReplica() {
		final SessionFactory sessionFactory = emf.unwrap( SessionFactory.class );
		try (Session session = sessionFactory.withOptions().readOnly( true ).openSession()) {
			session.beginTransaction();
			final int port = session.createNativeQuery( "select inet_server_port()", Integer.class ).getSingleResult();
			assertThat( cluster.nodeForPort( port ).isPrimary() ).isFalse();
			session.getTransaction().commit();
		}
	}

	@Test
	void noReplicaConfigured_leavesHibernateUnchanged() throws SQLException {
		final Map<String, Object> settings = new HashMap<>();
		settings.put( RoutingSettings.REPLICA_URLS, null );
		final EntityManagerFactory plain = emf( cluster, settings );
		try (plain) {
			assertThat( plain.unwrap( SessionFactoryImplementor.class ).getServiceRegistry()
					.getService( MultiTenantConnectionProvider.class ) ).isNull();
			try (EntityManager em = plain.createEntityManager()) {
				em.getTransaction().begin();
				em.persist( new Note( "plain" ) );
				em.getTransaction().commit();
				assertThat( servedBy( cluster, em ).isPrimary() ).isTrue();
			}
		}
		final EntityManagerFactory samePool = emf( cluster, Map.of( RoutingSettings.REPLICA_URLS, cluster.primary().jdbcUrl() ) );
		try (samePool) {
			assertThat( samePool.unwrap( SessionFactoryImplementor.class ).getServiceRegistry()
					.getService( MultiTenantConnectionProvider.class ) ).as( "a replica URL equal to the primary's" ).isNull();
		}
		assertThat( countOnPrimary( cluster, "note" ) ).isEqualTo( 1 );
	}

	private static int balanceOnPrimary(long id) throws SQLException {
		try (var c = cluster.connect( cluster.primary() ); var s = c.createStatement();
				var rs = s.executeQuery( "select balance from account where id = " + id )) {
			rs.next();
			return rs.getInt( 1 );
		}
	}

	private static String textOnPrimary(long id) throws SQLException {
		try (var c = cluster.connect( cluster.primary() ); var s = c.createStatement();
				var rs = s.executeQuery( "select text from note where id = " + id )) {
			rs.next();
			return rs.getString( 1 );
		}
	}

	/**
	 * The standby backend that serves an EntityManager's reads. What a transaction leaves open there
	 * is asked of the standby itself: the state {@code pg_stat_activity} reports for the backend. A
	 * backend inside a transaction block reports {@code idle in transaction} between statements, one
	 * in auto-commit {@code idle}; PostgreSQL sets the state before it answers, so the check is exact.
	 * Only while the unit of work holds the connection: once it is back in the pool, the health check
	 * may be using it.
	 */
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
		return replicaBackend( ( (Number) row[0] ).intValue(), ( (Number) row[1] ).intValue() );
	}

	private static Backend backend(Connection connection) throws SQLException {
		try (PreparedStatement query = connection.prepareStatement( "select inet_server_port(), pg_backend_pid()" );
				ResultSet rs = query.executeQuery()) {
			rs.next();
			return replicaBackend( rs.getInt( 1 ), rs.getInt( 2 ) );
		}
	}

	private static Backend replicaBackend(int port, int pid) {
		final Backend backend = new Backend( cluster.nodeForPort( port ), pid );
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
	void repeatableRead_setAfterReadsRanInAutoCommit_opensOneSnapshotOnTheReplicaFromThere() throws SQLException {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			final Backend replica = backend( em );
			assertThat( replica.state() ).isEqualTo( "idle" );
			em.unwrap( Session.class ).doWork( connection -> connection.setTransactionIsolation( Connection.TRANSACTION_REPEATABLE_READ ) );
			assertThat( backend( em ) ).as( "the unit of work keeps its replica" ).isEqualTo( replica );
			assertThat( replica.state() ).isEqualTo( "idle in transaction" );
			em.getTransaction().commit();
		}
	}

	@Test
	void roleWhoseDefaultIsRepeatableRead_keepsATransactionOnTheReplica() throws SQLException {
		try (Connection admin = cluster.adminConnection( cluster.primary() ); Statement s = admin.createStatement()) {
			s.execute( "drop role if exists rr_reader" );
			s.execute( "create role rr_reader login password 'rr-secret'" );
			s.execute( "alter role rr_reader set default_transaction_isolation = 'repeatable read'" );
			s.execute( "grant select on note to rr_reader" );
		}
		cluster.awaitCaughtUp( Duration.ofSeconds( 30 ) );
		final EntityManagerFactory rr = emf( cluster, Map.of( "jakarta.persistence.jdbc.user", "rr_reader",
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

	// ---- SET and RESET follow the unit of work ------------------------------------------------

	private static void run(Connection connection, String sql) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement( sql )) {
			statement.execute();
		}
	}

	/** Where the next read of {@code connection} runs ({@code standby} or {@code primary}) and what {@code name} is set to there. */
	private static String settingWhereRead(Connection connection, String name) throws SQLException {
		return settingWhereRead( connection, name, "" );
	}

	private static String settingWhereRead(Connection connection, String name, String hint) throws SQLException {
		try (PreparedStatement query = connection.prepareStatement(
				hint + "select case when pg_is_in_recovery() then 'standby' else 'primary' end, current_setting(?, true)" )) {
			query.setString( 1, name );
			try (ResultSet rs = query.executeQuery()) {
				rs.next();
				return rs.getString( 1 ) + ": " + rs.getString( 2 );
			}
		}
	}

	private static String settingWhereRead(EntityManager em, String name) {
		final String[] answer = new String[1];
		em.unwrap( Session.class ).doWork( connection -> answer[0] = settingWhereRead( connection, name ) );
		return answer[0];
	}

	@Test
	void setLocal_inAReadWriteTransaction_holdsOnTheReplica_andFollowsTheTransactionToThePrimary() {
		try (EntityManager em = emf.createEntityManager()) {
			em.getTransaction().begin();
			em.createNativeQuery( "set local statement_timeout = '4321ms'" ).executeUpdate();
			assertThat( settingWhereRead( em, "statement_timeout" ) ).isEqualTo( "standby: 4321ms" );
			em.persist( new Note( "under a statement timeout" ) );
			em.flush();
			assertThat( settingWhereRead( em, "statement_timeout" ) ).as( "carried over to the primary at the write" )
					.isEqualTo( "primary: 4321ms" );
			em.getTransaction().commit();
			em.getTransaction().begin();
			assertThat( settingWhereRead( em, "statement_timeout" ) ).as( "SET LOCAL ended with its transaction" )
					.isEqualTo( "primary: 0" );
			em.getTransaction().commit();
		}
	}

	@Test
	void setLocal_endsWithItsTransaction_evenWhenTheConnectionLivesOn() {
		try (EntityManager em = emf.createEntityManager()) {
			em.unwrap( Session.class ).doWork( connection -> {
				connection.setAutoCommit( false );
				run( connection, "set local routing_it.step = 'one'" );
				assertThat( settingWhereRead( connection, "routing_it.step" ) ).isEqualTo( "standby: one" );
				run( connection, "insert into note (id, text) values (nextval('note_seq'), 'w')" );
				assertThat( settingWhereRead( connection, "routing_it.step" ) ).isEqualTo( "primary: one" );
				connection.commit();
				// The next transaction runs on a primary connection from the pool: it has no value, or an empty one.
				assertThat( settingWhereRead( connection, "routing_it.step" ) ).as( "not carried into the next transaction" )
						.isIn( "primary: ", "primary: null" );
				connection.commit();
				connection.setAutoCommit( true );
			} );
		}
	}

	@Test
	void setInATransactionThatRollsBack_isUndoneEverywhere() {
		try (EntityManager em = emf.createEntityManager()) {
			em.unwrap( Session.class ).doWork( connection -> {
				connection.setAutoCommit( false );
				run( connection, "set routing_it.mode = 'rolled back'" );
				final Backend replica = backend( connection );
				assertThat( replica.state() ).as( "the SET runs in a transaction on the replica, so a rollback undoes it there too" )
						.isEqualTo( "idle in transaction" );
				run( connection, "insert into note (id, text) values (nextval('note_seq'), 'w')" );
				assertThat( settingWhereRead( connection, "routing_it.mode" ) ).isEqualTo( "primary: rolled back" );
				connection.rollback();
				assertThat( settingWhereRead( connection, "routing_it.mode" ) ).as( "PostgreSQL undoes a SET whose transaction rolls back" )
						.doesNotContain( "rolled back" );
				connection.commit();
				connection.setAutoCommit( true );
			} );
		}
	}

	@Test
	void set_outsideATransaction_followsTheUnitOfWorkToThePrimary_andBackToTheReplica() {
		try (EntityManager em = emf.createEntityManager()) {
			em.unwrap( Session.class ).doWork( connection -> {
				run( connection, "set routing_it.tenant = 'acme'" );
				assertThat( settingWhereRead( connection, "routing_it.tenant" ) ).isEqualTo( "standby: acme" );
				run( connection, "insert into note (id, text) values (nextval('note_seq'), current_setting('routing_it.tenant'))" );
				assertThat( settingWhereRead( connection, "routing_it.tenant" ) ).isEqualTo( "primary: acme" );
				run( connection, "reset routing_it.tenant" );
				assertThat( settingWhereRead( connection, "routing_it.tenant" ) ).isEqualTo( "primary: " );
			} );
		}
		assertThat( textOfTheOnlyNote() ).as( "the write ran with the setting made before it" ).isEqualTo( "acme" );
	}

	private static final String PRIMARY_HINT = "/*+ " + RoutingHints.strategy( Strategy.PRIMARY ) + " */ ";

	@Test
	void staleRead_afterASettingOnThePrimary_getsTheSettingOnTheReplicaToo() {
		try (EntityManager em = emf.createEntityManager()) {
			em.setProperty( RoutingSettings.STRATEGY, Strategy.STALE_READ );
			em.unwrap( Session.class ).doWork( connection -> {
				assertThat( settingWhereRead( connection, "routing_it.tenant" ) ).isEqualTo( "standby: null" );
				run( connection, "insert into note (id, text) values (nextval('note_seq'), 'w')" );
				// Under STALE_READ a SET would run on the replica; the hint makes this one run on the primary.
				run( connection, PRIMARY_HINT + "set routing_it.tenant = 'globex'" );
				assertThat( settingWhereRead( connection, "routing_it.tenant", PRIMARY_HINT ) ).isEqualTo( "primary: globex" );
				assertThat( settingWhereRead( connection, "routing_it.tenant" ) ).as( "STALE_READ reads the replica after the write" )
						.isEqualTo( "standby: globex" );
			} );
		}
	}

	@Test
	void setThatFailed_isNotCarriedOver() {
		try (EntityManager em = emf.createEntityManager()) {
			em.unwrap( Session.class ).doWork( connection -> {
				assertThatThrownBy( () -> run( connection, "set statement_timeout = 'banana'" ) ).isInstanceOf( SQLException.class );
				run( connection, "insert into note (id, text) values (nextval('note_seq'), 'w')" );
				assertThat( settingWhereRead( connection, "statement_timeout" ) ).isEqualTo( "primary: 0" );
			} );
		}
	}

	private static String textOfTheOnlyNote() {
		try (var c = cluster.connect( cluster.primary() ); var s = c.createStatement();
				var rs = s.executeQuery( "select string_agg(text, ',') from note" )) {
			rs.next();
			return rs.getString( 1 );
		}
		catch (SQLException e) {
			throw new AssertionError( e );
		}
	}
}
