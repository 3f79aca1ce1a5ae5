package io.github.hibernaterouting.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The structure the code promises, checked on its sources: the public package and the internal
 * packages never depend on each other in a cycle, and no main-code class outgrows one concept.
 */
class ArchitectureTest {
    private static final Path SOURCES = Path.of("src", "main", "java");
    private static final String PUBLIC_PACKAGE = "io.github.hibernaterouting.routing";
    /** Longest main-code file in lines, generated forwarding bases excepted. */
    private static final int MAX_LINES = 420;

    /**
     * String literals and comments, in one pass so that neither hides in the other: a string that holds
     * {@code //} ({@code "jdbc:postgresql://"}) is no comment, a quote in a comment or a character
     * literal starts no string.
     */
    private static final Pattern STRINGS_AND_COMMENTS = Pattern.compile(
            "(\"(?:\\\\.|[^\"\\\\\\n])*+\")|'(?:\\\\.|[^'\\\\])'|/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);

    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern QUALIFIED =
            Pattern.compile("\\b(io\\.github\\.hibernaterouting\\.routing(?:\\.[a-z]\\w*)*)\\.([A-Z]\\w*)");

    /** A source file: its top-level class name, package and code without comments or strings. */
    private record Source(String name, String pkg, String code) {
        String qualified() {
            return pkg + "." + name;
        }
    }

    private static List<Source> sources(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().endsWith(".java") && !file.endsWith("package-info.java"))
                    .map(file -> {
                        try {
                            final String text = Files.readString(file);
                            final Matcher pkg = PACKAGE.matcher(text);
                            final String code = STRINGS_AND_COMMENTS
                                    .matcher(text)
                                    .replaceAll(m -> m.group(1) != null ? "\"\"" : " ");
                            final String name = file.getFileName().toString().replace(".java", "");
                            return new Source(name, pkg.find() ? pkg.group(1) : "", code);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .toList();
        }
    }

    /** Which files each file refers to: imports and qualified names, and simple names of its own package. */
    private static Map<String, Set<String>> dependencies(List<Source> sources) {
        final Map<String, Source> byName = new HashMap<>();
        sources.forEach(source -> byName.put(source.qualified(), source));
        final Map<String, Set<String>> edges = new LinkedHashMap<>();
        for (Source source : sources) {
            final Set<String> targets = new LinkedHashSet<>();
            final Matcher qualified = QUALIFIED.matcher(source.code());
            while (qualified.find()) {
                final String target = qualified.group(1) + "." + qualified.group(2);
                if (byName.containsKey(target)) {
                    targets.add(target);
                }
            }
            for (Source other : sources) {
                if (other != source
                        && other.pkg().equals(source.pkg())
                        && Pattern.compile("\\b" + other.name() + "\\b")
                                .matcher(source.code())
                                .find()) {
                    targets.add(other.qualified());
                }
            }
            targets.remove(source.qualified());
            edges.put(source.qualified(), targets);
        }
        return edges;
    }

    /** Tarjan's strongly connected components of size above one. */
    private static List<Set<String>> cycles(Map<String, Set<String>> edges) {
        final Map<String, Integer> index = new HashMap<>();
        final Map<String, Integer> low = new HashMap<>();
        final Deque<String> stack = new ArrayDeque<>();
        final Set<String> onStack = new LinkedHashSet<>();
        final List<Set<String>> components = new ArrayList<>();
        final int[] counter = {0};
        for (String node : edges.keySet()) {
            if (!index.containsKey(node)) {
                strongConnect(node, edges, index, low, stack, onStack, components, counter);
            }
        }
        return components;
    }

    private static void strongConnect(
            String node,
            Map<String, Set<String>> edges,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            List<Set<String>> components,
            int[] counter) {
        index.put(node, counter[0]);
        low.put(node, counter[0]++);
        stack.push(node);
        onStack.add(node);
        for (String next : edges.getOrDefault(node, Set.of())) {
            if (!index.containsKey(next)) {
                strongConnect(next, edges, index, low, stack, onStack, components, counter);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (onStack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            final Set<String> component = new LinkedHashSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                components.add(component);
            }
        }
    }

    private static boolean isPublic(String qualified) {
        return qualified.substring(0, qualified.lastIndexOf('.')).equals(PUBLIC_PACKAGE);
    }

    @Test
    void thePublicPackageAndTheInternalPackages_formNoCycle() throws IOException {
        final List<Set<String>> mixed = cycles(dependencies(sources(SOURCES))).stream()
                .filter(component -> component.stream().anyMatch(ArchitectureTest::isPublic)
                        && component.stream().anyMatch(name -> !isPublic(name)))
                .toList();
        assertThat(mixed)
                .as("files of the public package and internal files that depend on each other in a cycle")
                .isEmpty();
    }

    @Test
    void aCycleThroughThePublicPackage_wouldBeFound() {
        final Map<String, Set<String>> edges = new LinkedHashMap<>();
        edges.put(PUBLIC_PACKAGE + ".A", Set.of(PUBLIC_PACKAGE + ".internal.B"));
        edges.put(PUBLIC_PACKAGE + ".internal.B", Set.of(PUBLIC_PACKAGE + ".internal.C"));
        edges.put(PUBLIC_PACKAGE + ".internal.C", Set.of(PUBLIC_PACKAGE + ".A"));
        assertThat(cycles(edges))
                .containsExactly(
                        Set.of(PUBLIC_PACKAGE + ".A", PUBLIC_PACKAGE + ".internal.B", PUBLIC_PACKAGE + ".internal.C"));
    }

    @Test
    void noMainClassInAnyModule_isLongerThanOneConceptNeeds() throws IOException {
        final Map<String, Long> tooLong = new LinkedHashMap<>();
        try (Stream<Path> modules = Files.list(Path.of(".."))) {
            for (Path module : modules.toList()) {
                final Path main = module.resolve(SOURCES);
                if (!Files.isDirectory(main)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(main)) {
                    for (Path file :
                            files.filter(f -> f.toString().endsWith(".java")).toList()) {
                        final long lines = Files.readAllLines(file).size();
                        if (lines > MAX_LINES && !file.getFileName().toString().startsWith("Forwarding")) {
                            tooLong.put(Path.of("..").relativize(file).toString(), lines);
                        }
                    }
                }
            }
        }
        assertThat(tooLong)
                .as("main-code files over %d lines (generated Forwarding* bases excepted)", MAX_LINES)
                .isEmpty();
    }
}
