package io.github.hibernaterouting.benchmarks.workload;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.hibernaterouting.testkit.PostgresCluster;

import static io.github.hibernaterouting.benchmarks.workload.Statistics.mean;
import static io.github.hibernaterouting.benchmarks.workload.Statistics.median;
import static io.github.hibernaterouting.benchmarks.workload.Statistics.medianInterval;

/**
 * Routing overhead: the same JPA workload ({@link OverheadWorker}) through plain Hibernate with
 * HikariCP and through hibernate-routing whose one replica is the primary under another address.
 *
 * <p>Each variant runs in its own warm JVM (the plain one without hibernate-routing on the class
 * path); this process starts the server, then alternates the variants in rounds (A B, B A, …) for
 * each thread count and prints ops/s and the ratio per round. Options: {@code --threads 2,4},
 * {@code --rounds 6}, {@code --seconds 10}, {@code --warmup 20} (seconds per variant),
 * {@code --pool 8}, {@code --jfr DIR} (a JFR recording per variant), {@code --standby} (adds
 * variant C: routing with a real streaming standby and {@code check_recovery} on), {@code --split}
 * (adds variant S: plain Hibernate with the read/write split written by hand, two persistence units
 * on the same two addresses as B, which tells the library's cost from the cost of a second
 * connection), {@code --only
 * routing} (run one variant, e.g. for a profile), {@code --other-library JAR} (adds variant R:
 * routing as B, with another build of hibernate-routing, to measure a change), {@code --statements} (before measuring, one
 * single-thread run per variant with {@code pg_stat_statements}: the statements each operation
 * sends to the server, and the server's CPU per operation), {@code --pin} (the server's processes on
 * the last CPU, the workers on the others, as if they ran on separate machines; see
 * docs/performance.md for why this matters on a small machine).
 */
public final class OverheadBenchmark {
	private OverheadBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		final Map<String, String> options = options( args );
		final int[] threadCounts = Arrays.stream( options.getOrDefault( "threads", "2,4" ).split( "," ) ).mapToInt( Integer::parseInt ).toArray();
		final int rounds = Integer.parseInt( options.getOrDefault( "rounds", "6" ) );
		final int seconds = Integer.parseInt( options.getOrDefault( "seconds", "10" ) );
		final int warmup = Integer.parseInt( options.getOrDefault( "warmup", "20" ) );
		final String pool = options.getOrDefault( "pool", "8" );
		final String jfr = options.get( "jfr" );
		final boolean standby = options.containsKey( "standby" );
		final boolean split = options.containsKey( "split" );
		final String only = options.get( "only" );
		// Another build of hibernate-routing (a jar) as variant R beside B, e.g. the previous release, to measure a change.
		final String otherLibrary = options.get( "other-library" );
		final boolean statements = options.containsKey( "statements" );
		final int cpus = Runtime.getRuntime().availableProcessors();
		final String pin = options.containsKey( "pin" ) ? requireCpus( cpus ) : null;

		final Path jar = Path.of( OverheadBenchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI() );
		final Path library = jar.resolveSibling( "lib" ).resolve( "hibernate-routing.jar" );
		if ( !Files.isRegularFile( library ) ) {
			throw new IllegalStateException( "run from benchmarks/target/workload.jar; " + library + " is missing" );
		}
		final PostgresCluster.Builder builder = PostgresCluster.builder().standbys( standby ? 1 : 0 );
		if ( statements ) {
			builder.serverSetting( "shared_preload_libraries", "pg_stat_statements" );
		}
		try (PostgresCluster cluster = builder.start()) {
			if ( pin != null ) {
				pinServer( cpus );
			}
			seed( cluster );
			final String primaryUrl = cluster.primary().jdbcUrl();
			final String sameServer = sameServer( primaryUrl );
			final String base = String.join( " ", primaryUrl, cluster.user(), cluster.password(), pool );
			final Map<String, String> commands = new LinkedHashMap<>();
			commands.put( "A plain", "plain " + base );
			commands.put( "B routing", "routing " + base + " " + sameServer + " false" );
			if ( split ) {
				commands.put( "S split by hand", "split " + base + " " + sameServer );
			}
			if ( otherLibrary != null ) {
				commands.put( "R routing, " + Path.of( otherLibrary ).getFileName(), "routing " + base + " " + sameServer + " false" );
			}
			if ( standby ) {
				commands.put( "C routing+standby", "routing " + base + " " + cluster.standby( 1 ).jdbcUrl() + " true" );
			}
			final List<Variant> variants = new ArrayList<>();
			try {
				for ( Map.Entry<String, String> entry : commands.entrySet() ) {
					if ( only != null && !entry.getValue().startsWith( only + " " ) ) {
						continue;
					}
					final String classPath = !entry.getValue().startsWith( "routing" ) ? jar.toString()
							: jar + File.pathSeparator + ( entry.getKey().startsWith( "R " ) ? Path.of( otherLibrary ).toAbsolutePath() : library );
					variants.add( Variant.start( entry.getKey(), classPath, entry.getValue().split( " " ), jfr, pin ) );
				}
				System.out.printf( Locale.ROOT, "server: PostgreSQL on %s; pool %s; %d s per run; JDK %s; %s%n", primaryUrl, pool, seconds,
						System.getProperty( "java.version" ),
						pin == null ? cpus + " CPUs shared by server and workers" : "server on CPU " + ( cpus - 1 ) + ", workers on CPUs " + pin );
				for ( int w = 0; w < 2; w++ ) {
					for ( Variant variant : variants ) {
						variant.run( threadCounts[threadCounts.length - 1], warmup / 2 );
					}
				}
				if ( statements ) {
					countStatements( cluster, variants, seconds );
				}
				for ( int threads : threadCounts ) {
					measure( variants, threads, rounds, seconds );
				}
			}
			finally {
				for ( Variant variant : variants ) {
					variant.quit();
				}
			}
		}
	}

	private static void measure(List<Variant> variants, int threads, int rounds, int seconds) throws IOException {
		final int n = variants.size();
		final double[][] ops = new double[rounds][n];
		final double[][] cpu = new double[rounds][n];
		// Ratios: every variant against A; and B against S (the split written by hand) when both run.
		final List<int[]> pairs = new ArrayList<>();
		for ( int v = 1; v < n; v++ ) {
			pairs.add( new int[] { v, 0 } );
		}
		final int b = indexOf( variants, "B" );
		final int split = indexOf( variants, "S" );
		if ( b >= 0 && split >= 0 ) {
			pairs.add( new int[] { b, split } );
		}
		final int other = indexOf( variants, "R" );
		if ( b >= 0 && other >= 0 ) {
			pairs.add( new int[] { b, other } );
		}
		System.out.printf( Locale.ROOT, "%n%d threads%n| round | order |", threads );
		for ( Variant variant : variants ) {
			System.out.printf( " %s ops/s |", variant.name() );
		}
		for ( int[] pair : pairs ) {
			System.out.printf( " %s / %s |", variants.get( pair[0] ).letter(), variants.get( pair[1] ).letter() );
		}
		for ( Variant variant : variants ) {
			System.out.printf( " %s JVM CPU µs/op |", variant.letter() );
		}
		System.out.println();
		for ( int round = 0; round < rounds; round++ ) {
			// Rotate the order so no variant always runs first.
			final StringBuilder order = new StringBuilder();
			for ( int i = 0; i < n; i++ ) {
				final int v = ( i + round ) % n;
				order.append( variants.get( v ).letter() );
				final double[] result = variants.get( v ).run( threads, seconds );
				ops[round][v] = result[0];
				cpu[round][v] = result[1];
			}
			System.out.printf( Locale.ROOT, "| %d | %s |", round + 1, order );
			for ( double o : ops[round] ) {
				System.out.printf( Locale.ROOT, " %,.0f |", o );
			}
			for ( int[] pair : pairs ) {
				System.out.printf( Locale.ROOT, " %.3f |", ops[round][pair[0]] / ops[round][pair[1]] );
			}
			for ( double c : cpu[round] ) {
				System.out.printf( Locale.ROOT, " %.0f |", c );
			}
			System.out.println();
			System.out.flush();
		}
		System.out.printf( "| mean | |" );
		for ( int v = 0; v < n; v++ ) {
			System.out.printf( Locale.ROOT, " %,.0f |", mean( ops, v ) );
		}
		for ( int[] pair : pairs ) {
			final double[] ratios = Arrays.stream( ops ).mapToDouble( round -> round[pair[0]] / round[pair[1]] ).sorted().toArray();
			System.out.printf( Locale.ROOT, " %.3f (mean ops ratio); median %.3f, 95%% CI of the median %s, min %.3f, max %.3f |",
					mean( ops, pair[0] ) / mean( ops, pair[1] ), median( ratios ), medianInterval( ratios ), ratios[0], ratios[ratios.length - 1] );
		}
		for ( int v = 0; v < n; v++ ) {
			final int variant = v;
			System.out.printf( Locale.ROOT, " %.0f (median %.0f) |", mean( cpu, v ), median( Arrays.stream( cpu ).mapToDouble( r -> r[variant] ).sorted().toArray() ) );
		}
		System.out.println();
		System.out.flush();
	}

	private static int indexOf(List<Variant> variants, String letter) {
		for ( int v = 0; v < variants.size(); v++ ) {
			if ( variants.get( v ).letter().equals( letter ) ) {
				return v;
			}
		}
		return -1;
	}

	/**
	 * Runs each variant alone on one thread and prints what reached the server per operation: every
	 * statement {@code pg_stat_statements} saw (BEGIN, COMMIT and SET included) and the CPU time of
	 * all server processes.
	 */
	private static void countStatements(PostgresCluster cluster, List<Variant> variants, int seconds) throws IOException, SQLException {
		try (Connection c = cluster.adminConnection( cluster.primary() ); Statement s = c.createStatement()) {
			s.execute( "create extension if not exists pg_stat_statements" );
			for ( int pass = 0; pass < 2 * variants.size(); pass++ ) {
				final Variant variant = variants.get( pass % variants.size() );
				s.execute( "select pg_stat_statements_reset()" );
				final long[] xactBefore = transactions( s );
				final Map<String, Long> cpuBefore = serverCpuTicks();
				final String[] result = variant.runRaw( 1, seconds );
				final List<Map.Entry<String, Long>> perProcess = cpuDelta( cpuBefore, serverCpuTicks() );
				final long cpuTicks = perProcess.stream().mapToLong( Map.Entry::getValue ).sum();
				final long ops = Long.parseLong( result[1] );
				final long[] xactAfter = transactions( s );
				System.out.printf( Locale.ROOT,
						"%n%s, 1 thread, %,d operations: server CPU %.1f µs/op; JVM CPU %.1f µs/op, of which the worker thread %.1f%n"
								+ "| statements/op | query |%n",
						variant.name(), ops, cpuTicks * 1e6 / CLOCK_TICKS / ops, Long.parseLong( result[6] ) / 1e3 / ops,
						Long.parseLong( result[7] ) / 1e3 / ops );
				double total = 0;
				try (var rows = s.executeQuery( "select calls, regexp_replace(query, '\\s+', ' ', 'g') from pg_stat_statements "
						+ "where query not like '%pg_stat_statements%' order by calls desc" )) {
					while ( rows.next() ) {
						final double perOp = rows.getLong( 1 ) / (double) ops;
						total += perOp;
						if ( perOp >= 0.001 ) {
							final String query = rows.getString( 2 );
							System.out.printf( Locale.ROOT, "| %.3f | %s |%n", perOp, query.length() > 110 ? query.substring( 0, 110 ) + "…" : query );
						}
					}
				}
				System.out.printf( Locale.ROOT, "| %.3f | total |%n", total );
				System.out.printf( Locale.ROOT, "commits/op %.3f, rollbacks/op %.3f, new sessions %d%n", ( xactAfter[0] - xactBefore[0] ) / (double) ops,
						( xactAfter[1] - xactBefore[1] ) / (double) ops, xactAfter[2] - xactBefore[2] );
				for ( Map.Entry<String, Long> process : perProcess.subList( 0, Math.min( 6, perProcess.size() ) ) ) {
					System.out.printf( Locale.ROOT, "server process %.1f µs/op: %s%n", process.getValue() * 1e6 / CLOCK_TICKS / ops, process.getKey() );
				}
			}
		}
	}

	/** The database's committed and rolled-back transactions, and sessions, so far. */
	private static long[] transactions(Statement s) throws SQLException {
		s.execute( "select pg_stat_clear_snapshot()" );
		try (var rows = s.executeQuery( "select xact_commit, xact_rollback, sessions from pg_stat_database where datname = current_database()" )) {
			rows.next();
			return new long[] { rows.getLong( 1 ), rows.getLong( 2 ), rows.getLong( 3 ) };
		}
	}

	/** {@code sysconf(_SC_CLK_TCK)}; 100 on every Linux this runs on. */
	private static final double CLOCK_TICKS = 100;

	/** User and system CPU of every {@code postgres} process, in clock ticks, by process title. */
	private static Map<String, Long> serverCpuTicks() throws IOException {
		final Map<String, Long> ticks = new java.util.TreeMap<>();
		try (var processes = Files.list( Path.of( "/proc" ) )) {
			for ( Path process : (Iterable<Path>) processes::iterator ) {
				if ( !process.getFileName().toString().chars().allMatch( Character::isDigit ) ) {
					continue;
				}
				final String stat;
				final String title;
				try {
					stat = Files.readString( process.resolve( "stat" ) );
					title = process.getFileName() + " " + Files.readString( process.resolve( "cmdline" ) ).replace( '\0', ' ' ).trim();
				}
				catch (IOException gone) {
					continue;
				}
				if ( !stat.contains( "(postgres)" ) ) {
					continue;
				}
				// Fields after the command: state is field 3; utime and stime are fields 14 and 15.
				final String[] fields = stat.substring( stat.lastIndexOf( ')' ) + 2 ).split( " " );
				ticks.put( title, Long.parseLong( fields[11] ) + Long.parseLong( fields[12] ) );
			}
		}
		return ticks;
	}

	/** The CPU ticks each process used between two readings, most first. */
	private static List<Map.Entry<String, Long>> cpuDelta(Map<String, Long> before, Map<String, Long> after) {
		final List<Map.Entry<String, Long>> delta = new ArrayList<>();
		after.forEach( (title, ticks) -> {
			final long used = ticks - before.getOrDefault( title, 0L );
			if ( used > 0 ) {
				delta.add( Map.entry( title, used ) );
			}
		} );
		delta.sort( Map.Entry.<String, Long>comparingByValue().reversed() );
		return delta;
	}

	/** Moves every {@code postgres} process to the last CPU; new backends fork from the postmaster and inherit it. */
	static void pinServer(int cpus) throws IOException {
		for ( String process : serverCpuTicks().keySet() ) {
			taskset( "-a", "-p", "-c", String.valueOf( cpus - 1 ), process.substring( 0, process.indexOf( ' ' ) ) );
		}
	}

	static String requireCpus(int cpus) {
		if ( cpus < 2 ) {
			throw new IllegalArgumentException( "--pin needs at least 2 CPUs (one for the server, the rest for the workers); this machine has " + cpus );
		}
		return cpus == 2 ? "0" : "0-" + ( cpus - 2 );
	}

	static void taskset(String... arguments) throws IOException {
		final List<String> command = new ArrayList<>( List.of( "taskset" ) );
		command.addAll( Arrays.asList( arguments ) );
		final Process process = new ProcessBuilder( command ).redirectOutput( ProcessBuilder.Redirect.DISCARD ).redirectError( ProcessBuilder.Redirect.INHERIT ).start();
		try {
			if ( process.waitFor() != 0 ) {
				throw new IOException( String.join( " ", command ) + " failed with exit code " + process.exitValue() );
			}
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IOException( "interrupted: " + String.join( " ", command ), e );
		}
	}

	/** The same server under another address: {@code localhost} for {@code 127.0.0.1}. */
	static String sameServer(String primaryUrl) {
		final String sameServer = primaryUrl.replace( "//127.0.0.1:", "//localhost:" );
		if ( sameServer.equals( primaryUrl ) ) {
			throw new IllegalStateException( "expected a 127.0.0.1 URL: " + primaryUrl );
		}
		return sameServer;
	}

	static void seed(PostgresCluster cluster) throws SQLException {
		try (Connection c = cluster.connect( cluster.primary() ); Statement s = c.createStatement()) {
			s.execute( "create table item (id bigint primary key, name text, qty int not null, version bigint not null)" );
			s.execute( "create sequence item_event_seq start 1 increment 50" );
			s.execute( "create table item_event (id bigint primary key, item_id bigint not null, text text)" );
			s.execute( "insert into item select i, 'item-' || i, 0, 0 from generate_series(1, " + OverheadWorker.ITEMS + ") i" );
			s.execute( "vacuum analyze item" );
		}
		cluster.awaitCaughtUp( Duration.ofSeconds( 60 ) );
	}

	static Map<String, String> options(String[] args) {
		final Map<String, String> options = new LinkedHashMap<>();
		for ( int i = 0; i < args.length; i++ ) {
			if ( !args[i].startsWith( "--" ) ) {
				throw new IllegalArgumentException( "unexpected argument " + args[i] );
			}
			final String key = args[i].substring( 2 );
			if ( i + 1 < args.length && !args[i + 1].startsWith( "--" ) ) {
				options.put( key, args[++i] );
			}
			else {
				options.put( key, "true" );
			}
		}
		return options;
	}
}
