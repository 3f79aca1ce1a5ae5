package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Finds live processes tied to a directory, via /proc: by command line or working directory (postgres backends chdir to their data dir). */
final class ProcScan {
    private ProcScan() {}

    static List<String> processesUsing(Path dir) {
        String needle = dir.toString();
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : (Iterable<Path>)
                    procs.filter(p -> p.getFileName().toString().matches("\\d+"))::iterator) {
                try {
                    String cmdline = new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ');
                    String cwd = "";
                    try {
                        cwd = Files.readSymbolicLink(proc.resolve("cwd")).toString();
                    } catch (IOException | SecurityException e) {
                        // Not our process: cannot read its cwd.
                    }
                    if (cmdline.contains(needle) || cwd.startsWith(needle)) {
                        found.add(proc.getFileName() + ": " + cmdline.trim() + " (cwd " + cwd + ")");
                    }
                } catch (IOException e) {
                    // The process exited while we looked.
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return found;
    }
}
