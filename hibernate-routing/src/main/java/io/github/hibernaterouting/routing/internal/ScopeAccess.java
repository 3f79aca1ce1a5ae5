package io.github.hibernaterouting.routing.internal;

import java.util.function.LongSupplier;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;

/**
 * What the library may do to a {@link RoutingScope} that users may not: record commits, cache the
 * actor's resolved position. {@code RoutingScope} installs the implementation when it is loaded.
 */
public abstract class ScopeAccess {
	private static volatile ScopeAccess installed;

	/** Called once by {@code RoutingScope}. */
	public static void install(ScopeAccess access) {
		installed = access;
	}

	static ScopeAccess get() {
		if ( installed == null ) {
			RoutingScope.current(); // loads RoutingScope, which installs the implementation
		}
		return installed;
	}

	/** Records a committed write's position in the scope and its parents. */
	public abstract void recordCommit(RoutingScope scope, ConsistencyToken position);

	/** The actor's minimum position for one persistence unit, looked up once per scope. */
	public abstract long resolved(RoutingScope scope, Object resolver, LongSupplier lookup);

	/** Drops the cached actor position after a write, in the scope and its parents. */
	public abstract void forgetResolved(RoutingScope scope);

	/** Whether the persistence unit {@code resolver} already stored the actor's mutation marker for this scope. */
	public abstract boolean marked(RoutingScope scope, Object resolver);

	/** Records that {@code resolver} stored the actor's mutation marker for this scope. */
	public abstract void setMarked(RoutingScope scope, Object resolver);
}
