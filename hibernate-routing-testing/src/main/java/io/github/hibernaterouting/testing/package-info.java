/**
 * JUnit 5 support for tests of code that uses hibernate-routing, on the test kit's cluster:
 * {@link io.github.hibernaterouting.testing.RoutingTestSupport} (persistence units, which server
 * answered, the data on the primary, waiting for replicas) and
 * {@link io.github.hibernaterouting.testing.RoutingLeakCheck} (fails tests that leak a routing
 * scope or a pooled connection).
 */
package io.github.hibernaterouting.testing;
