package io.github.hibernaterouting.benchmarks.workload;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.TimeUnit;

import io.github.hibernaterouting.testkit.PostgresCluster;

/**
 * Routing overhead: the same JPA workload ({@link OverheadWorker}) through plain Hibernate with
 * HikariCP and through hibernate-routing whose one replica is the primary under another address.
 *
 * <p>Each variant runs in its own warm JVM (the plain one without hibernate-routing on the class
 * path); this process starts the server, then alternates the variants in rounds (A B, B A, …) for
 * each thread count and prints ops/s and the ratio per round. Options: {@code --threads 2,4},
 * {@code --rounds 6}, {@code --seconds 10}, {@code --warmup 20} (seconds per variant),
 * {@code --pool 8}, {@code --jfr DIR} (a JFR recording per variant), {@code --standby} (adds
 * variant C: routing with a real streaming standby and {@code check_recovery} on), {@code --only
 * routing} (run one variant, e.g. for a profile).
 */
public final class OverheadBenchmark {
	private OverheadBenchmark() {
	}

	private record Variant(String name, Process process, BufferedReader out, PrintWriter in) {
		/** Runs the workload; returns {ops/s, JVM CPU µs per op}. */
		double[] run(int threads, int seconds) throws IOException {
			in.println( "run " + threads + " " + seconds * 1000L );
			in.flush();
			final String[] result = await( "RESULT" ).split( " " );
			final long ops = Long.parseLong( result[1] );
			final long errors = Long.parseLong( result[4] );
			if ( errors > 0 ) {
				System.err.println( name + ": " + errors + " failed operations" );
			}
			return new double[] { ops / ( Long.parseLong( result[5] ) / 1e9 ), Long.parseLong( result[6] ) / 1e3 / ops };
		}

		String await(String prefix) throws IOException {
			for ( String line = out.readLine(); line != null; line = out.readLine() ) {
				if ( line.startsWith( prefix ) ) {
					return line;
				}
				System.err.println( name + "> " + line );
			}
			throw new IOException( name + " ended" );
		}

		void quit() throws InterruptedException {
			in.println( "quit" );
			in.flush();
			if ( !process.waitFor( 60, TimeUnit.SECONDS ) ) {
				process.destroy();
			}
		}
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
		final String only = options.get( "only" );

		final Path jar = Path.of( OverheadBenchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI() );
		final Path library = jar.resolveSibling( "lib" ).resolve( "hibernate-routing.jar" );
		if ( !Files.isRegularFile( library ) ) {
			throw new IllegalStateException( "run from benchmarks/target/workload.jar; " + library + " is missing" );
		}
		try (PostgresCluster cluster = PostgresCluster.builder().standbys( standby ? 1 : 0 ).start()) {
			seed( cluster );
			final String primaryUrl = cluster.primary().jdbcUrl();
			final String sameServer = primaryUrl.replace( "//127.0.0.1:", "//localhost:" );
			if ( sameServer.equals( primaryUrl ) ) {
				throw new IllegalStateException( "expected a 127.0.0.1 URL: " + primaryUrl );
			}
			final String base = String.join( " ", primaryUrl, cluster.user(), cluster.password(), pool );
			final Map<String, String> commands = new LinkedHashMap<>();
			commands.put( "A plain", "plain " + base );
			commands.put( "B routing", "routing " + base + " " + sameServer + " false" );
			if ( standby ) {
				commands.put( "C routing+standby", "routing " + base + " " + cluster.standby( 1 ).jdbcUrl() + " true" );
			}
			final List<Variant> variants = new ArrayList<>();
			try {
				for ( Map.Entry<String, String> entry : commands.entrySet() ) {
					if ( only != null && !entry.getValue().startsWith( only + " " ) ) {
						continue;
					}
					final String classPath = entry.getValue().startsWith( "plain" ) ? jar.toString() : jar + File.pathSeparator + library;
					variants.add( start( entry.getKey(), classPath, entry.getValue().split( " " ), jfr ) );
				}
				System.out.printf( Locale.ROOT, "server: PostgreSQL on %s; pool %s; %d s per run; JDK %s%n", primaryUrl, pool, seconds,
						System.getProperty( "java.version" ) );
				for ( int w = 0; w < 2; w++ ) {
					for ( Variant variant : variants ) {
						variant.run( threadCounts[threadCounts.length - 1], warmup / 2 );
					}
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
		System.out.printf( Locale.ROOT, "%n%d threads%n| round | order |", threads );
		for ( Variant variant : variants ) {
			System.out.printf( " %s ops/s |", variant.name() );
		}
		for ( int v = 1; v < n; v++ ) {
			System.out.printf( " %s / %s |", letter( variants.get( v ) ), letter( variants.get( 0 ) ) );
		}
		for ( Variant variant : variants ) {
			System.out.printf( " %s JVM CPU µs/op |", letter( variant ) );
		}
		System.out.println();
		for ( int round = 0; round < rounds; round++ ) {
			// Rotate the order so no variant always runs first.
			final StringBuilder order = new StringBuilder();
			for ( int i = 0; i < n; i++ ) {
				final int v = ( i + round ) % n;
				order.append( letter( variants.get( v ) ) );
				final double[] result = variants.get( v ).run( threads, seconds );
				ops[round][v] = result[0];
				cpu[round][v] = result[1];
			}
			System.out.printf( Locale.ROOT, "| %d | %s |", round + 1, order );
			for ( double o : ops[round] ) {
				System.out.printf( Locale.ROOT, " %,.0f |", o );
			}
			for ( int v = 1; v < n; v++ ) {
				System.out.printf( Locale.ROOT, " %.3f |", ops[round][v] / ops[round][0] );
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
		for ( int v = 1; v < n; v++ ) {
			final int variant = v;
			final double[] ratios = Arrays.stream( ops ).mapToDouble( round -> round[variant] / round[0] ).sorted().toArray();
			System.out.printf( Locale.ROOT, " %.3f (mean ops ratio); median %.3f, min %.3f, max %.3f |", mean( ops, v ) / mean( ops, 0 ),
					median( ratios ), ratios[0], ratios[ratios.length - 1] );
		}
		for ( int v = 0; v < n; v++ ) {
			final int variant = v;
			System.out.printf( Locale.ROOT, " %.0f (median %.0f) |", mean( cpu, v ), median( Arrays.stream( cpu ).mapToDouble( r -> r[variant] ).sorted().toArray() ) );
		}
		System.out.println();
		System.out.flush();
	}

	private static String letter(Variant variant) {
		return variant.name().substring( 0, 1 );
	}

	private static double mean(double[][] values, int column) {
		return Arrays.stream( values ).mapToDouble( row -> row[column] ).average().orElse( Double.NaN );
	}

	private static double median(double[] sorted) {
		return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : ( sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2] ) / 2;
	}

	private static Variant start(String name, String classPath, String[] arguments, String jfr) throws IOException {
		final List<String> command = new ArrayList<>();
		command.add( Path.of( System.getProperty( "java.home" ), "bin", "java" ).toString() );
		command.add( "-Xms512m" );
		command.add( "-Xmx512m" );
		if ( jfr != null ) {
			Files.createDirectories( Path.of( jfr ) );
			command.add( "-XX:FlightRecorderOptions:stackdepth=256" );
			command.add( "-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
					+ Path.of( jfr ).resolve( name.replaceAll( "[^A-Za-z+]+", "-" ) + ".jfr" ).toAbsolutePath() );
		}
		command.add( "-cp" );
		command.add( classPath );
		command.add( OverheadWorker.class.getName() );
		command.addAll( Arrays.asList( arguments ) );
		final Process process = new ProcessBuilder( command ).redirectError( ProcessBuilder.Redirect.INHERIT ).start();
		final Variant variant = new Variant( name, process, new BufferedReader( new InputStreamReader( process.getInputStream(), StandardCharsets.UTF_8 ) ),
				new PrintWriter( process.getOutputStream(), false, StandardCharsets.UTF_8 ) );
		variant.await( "READY" );
		return variant;
	}

	private static void seed(PostgresCluster cluster) throws SQLException {
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
