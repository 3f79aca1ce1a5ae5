package io.github.hibernaterouting.routing.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.servlet.internal.JerseyAutoDiscoverable;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/** The descriptors that switch the filter and the Jakarta REST feature on without user code. */
class WebFragmentTest {
    @Test
    void webFragment_namesItself_runsAfterOthers_andMapsTheFilterToEveryRequest() throws Exception {
        final Document fragment;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/web-fragment.xml")) {
            assertThat(in).as("META-INF/web-fragment.xml").isNotNull();
            final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            fragment = factory.newDocumentBuilder().parse(in);
        }
        assertThat(text(fragment, "name")).containsExactly("hibernate_routing");
        final Element after =
                (Element) fragment.getElementsByTagNameNS("*", "after").item(0);
        assertThat(after.getElementsByTagNameNS("*", "others").getLength()).isEqualTo(1);
        assertThat(fragment.getElementsByTagNameNS("*", "before").getLength()).isZero();
        assertThat(text(fragment, "filter-class")).containsExactly(ReadYourWritesFilter.class.getName());
        assertThat(text(fragment, "url-pattern")).containsExactly("/*");
        assertThat(text(fragment, "filter-name")).containsOnly("ReadYourWritesFilter");
    }

    @Test
    void jerseyServiceFile_registersTheAutoDiscoverable() throws Exception {
        final List<URL> files = Collections.list(getClass()
                .getClassLoader()
                .getResources("META-INF/services/org.glassfish.jersey.internal.spi.AutoDiscoverable"));
        final List<String> lines = new ArrayList<>();
        for (URL file : files) {
            try (InputStream in = file.openStream()) {
                lines.addAll(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                        .lines()
                        .map(String::trim)
                        .toList());
            }
        }
        assertThat(lines).contains(JerseyAutoDiscoverable.class.getName());
    }

    private static List<String> text(Document document, String element) {
        final List<String> values = new ArrayList<>();
        final var nodes = document.getElementsByTagNameNS("*", element);
        for (int i = 0; i < nodes.getLength(); i++) {
            values.add(nodes.item(i).getTextContent().trim());
        }
        return values;
    }
}
