package io.github.hibernaterouting.audit;

import java.util.ArrayList;
import java.util.List;

/** An RFC 4180 CSV parser: comma-separated, double-quoted fields with {@code ""} escapes and embedded line breaks. */
final class CsvReader {

    private CsvReader() {}

    /** All records of {@code text}, including the header; a trailing line break does not add an empty record. */
    static List<List<String>> parse(String text) {
        List<List<String>> records = new ArrayList<>();
        List<String> record = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        int n = text.length();
        int i = 0;
        boolean quoted = false;
        boolean fieldStarted = false;
        if (n > 0 && text.charAt(0) == '\uFEFF') {
            i++; // byte-order mark written by spreadsheet tools
        }
        while (i < n) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < n && text.charAt(i + 1) == '"') {
                        field.append('"');
                        i += 2;
                        continue;
                    }
                    quoted = false;
                } else {
                    field.append(c);
                }
                i++;
            } else if (c == '"' && field.length() == 0) {
                quoted = true;
                fieldStarted = true;
                i++;
            } else if (c == ',') {
                record.add(field.toString());
                field.setLength(0);
                fieldStarted = true;
                i++;
            } else if (c == '\r' || c == '\n') {
                if (fieldStarted || field.length() > 0 || !record.isEmpty()) {
                    record.add(field.toString());
                    records.add(record);
                }
                record = new ArrayList<>();
                field.setLength(0);
                fieldStarted = false;
                i += c == '\r' && i + 1 < n && text.charAt(i + 1) == '\n' ? 2 : 1;
            } else {
                field.append(c);
                fieldStarted = true;
                i++;
            }
        }
        if (quoted) {
            throw new IllegalArgumentException("unterminated quoted field in record " + (records.size() + 1));
        }
        if (fieldStarted || field.length() > 0 || !record.isEmpty()) {
            record.add(field.toString());
            records.add(record);
        }
        return records;
    }
}
