/**
 * What applications implement to plug into the servlet filter: how a request's actor (and its
 * stamp) is found.
 */
package io.github.hibernaterouting.routing.servlet.spi;
