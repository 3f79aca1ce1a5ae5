package io.github.hibernaterouting.it.matrix;

/** The counters' common view: their value, an increment, and the server that loaded them. */
interface Counted {
    long value();

    void increment();

    /** {@code inet_server_port()} of the server that loaded the state, or null. */
    Integer server();
}
