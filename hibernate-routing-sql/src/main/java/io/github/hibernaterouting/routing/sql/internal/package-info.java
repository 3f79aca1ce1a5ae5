/**
 * The PostgreSQL tokenizer behind the classifier. Not supported API: it may change in any release.
 */
package io.github.hibernaterouting.routing.sql.internal;
