/**
 * The implementation of the servlet filter and the Jakarta REST feature. Not supported API:
 * anything here may change in any release without notice. Use
 * {@code io.github.hibernaterouting.routing.servlet} and its {@code spi}.
 */
package io.github.hibernaterouting.routing.servlet.internal;
