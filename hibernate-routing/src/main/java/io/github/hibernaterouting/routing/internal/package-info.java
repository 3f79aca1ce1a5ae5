/**
 * The implementation of hibernate-routing. Not supported API: anything here may change in any
 * release without notice. Use {@code io.github.hibernaterouting.routing} and its {@code spi}.
 */
package io.github.hibernaterouting.routing.internal;
