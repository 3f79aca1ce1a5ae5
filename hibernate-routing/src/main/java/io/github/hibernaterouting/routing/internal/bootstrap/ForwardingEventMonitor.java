package io.github.hibernaterouting.routing.internal.bootstrap;

import org.hibernate.LockMode;
import org.hibernate.cache.spi.Region;
import org.hibernate.cache.spi.access.CachedDomainDataAccess;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.monitor.spi.DiagnosticEvent;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.hibernate.event.spi.AutoFlushEvent;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;

/**
 * An {@link EventMonitor} that passes every event on to another monitor; subclasses override what
 * they observe. Generated from the {@code EventMonitor} interface of Hibernate ORM 7.4
 * ({@code ForwardingContractTest} checks that every method is here).
 */
abstract class ForwardingEventMonitor implements EventMonitor {
    private final EventMonitor delegate;

    ForwardingEventMonitor(EventMonitor delegate) {
        this.delegate = delegate;
    }

    @Override
    public DiagnosticEvent beginSessionOpenEvent() {
        return delegate.beginSessionOpenEvent();
    }

    @Override
    public void completeSessionOpenEvent(DiagnosticEvent sessionOpenEvent, SharedSessionContractImplementor session) {
        delegate.completeSessionOpenEvent(sessionOpenEvent, session);
    }

    @Override
    public DiagnosticEvent beginSessionClosedEvent() {
        return delegate.beginSessionClosedEvent();
    }

    @Override
    public void completeSessionClosedEvent(
            DiagnosticEvent sessionClosedEvent, SharedSessionContractImplementor session) {
        delegate.completeSessionClosedEvent(sessionClosedEvent, session);
    }

    @Override
    public DiagnosticEvent beginJdbcConnectionAcquisitionEvent() {
        return delegate.beginJdbcConnectionAcquisitionEvent();
    }

    @Override
    public void completeJdbcConnectionAcquisitionEvent(
            DiagnosticEvent jdbcConnectionAcquisitionEvent, SharedSessionContractImplementor session, Object tenantId) {
        delegate.completeJdbcConnectionAcquisitionEvent(jdbcConnectionAcquisitionEvent, session, tenantId);
    }

    @Override
    public DiagnosticEvent beginJdbcConnectionReleaseEvent() {
        return delegate.beginJdbcConnectionReleaseEvent();
    }

    @Override
    public void completeJdbcConnectionReleaseEvent(
            DiagnosticEvent jdbcConnectionReleaseEvent, SharedSessionContractImplementor session, Object tenantId) {
        delegate.completeJdbcConnectionReleaseEvent(jdbcConnectionReleaseEvent, session, tenantId);
    }

    @Override
    public DiagnosticEvent beginJdbcPreparedStatementCreationEvent() {
        return delegate.beginJdbcPreparedStatementCreationEvent();
    }

    @Override
    public void completeJdbcPreparedStatementCreationEvent(
            DiagnosticEvent jdbcPreparedStatementCreation, String preparedStatementSql) {
        delegate.completeJdbcPreparedStatementCreationEvent(jdbcPreparedStatementCreation, preparedStatementSql);
    }

    @Override
    public DiagnosticEvent beginJdbcPreparedStatementExecutionEvent() {
        return delegate.beginJdbcPreparedStatementExecutionEvent();
    }

    @Override
    public void completeJdbcPreparedStatementExecutionEvent(
            DiagnosticEvent jdbcPreparedStatementExecutionEvent, String preparedStatementSql) {
        delegate.completeJdbcPreparedStatementExecutionEvent(jdbcPreparedStatementExecutionEvent, preparedStatementSql);
    }

    @Override
    public DiagnosticEvent beginJdbcBatchExecutionEvent() {
        return delegate.beginJdbcBatchExecutionEvent();
    }

    @Override
    public void completeJdbcBatchExecutionEvent(DiagnosticEvent jdbcBatchExecutionEvent, String statementSql) {
        delegate.completeJdbcBatchExecutionEvent(jdbcBatchExecutionEvent, statementSql);
    }

    @Override
    public DiagnosticEvent beginCachePutEvent() {
        return delegate.beginCachePutEvent();
    }

    @Override
    public void completeCachePutEvent(
            DiagnosticEvent cachePutEvent,
            SharedSessionContractImplementor session,
            Region region,
            boolean cacheContentChanged,
            EventMonitor.CacheActionDescription description) {
        delegate.completeCachePutEvent(cachePutEvent, session, region, cacheContentChanged, description);
    }

    @Override
    public void completeCachePutEvent(
            DiagnosticEvent cachePutEvent,
            SharedSessionContractImplementor session,
            CachedDomainDataAccess cachedDomainDataAccess,
            EntityPersister persister,
            boolean cacheContentChanged,
            EventMonitor.CacheActionDescription description) {
        delegate.completeCachePutEvent(
                cachePutEvent, session, cachedDomainDataAccess, persister, cacheContentChanged, description);
    }

    @Override
    public void completeCachePutEvent(
            DiagnosticEvent cachePutEvent,
            SharedSessionContractImplementor session,
            CachedDomainDataAccess cachedDomainDataAccess,
            EntityPersister persister,
            boolean cacheContentChanged,
            boolean isNatualId,
            EventMonitor.CacheActionDescription description) {
        delegate.completeCachePutEvent(
                cachePutEvent,
                session,
                cachedDomainDataAccess,
                persister,
                cacheContentChanged,
                isNatualId,
                description);
    }

    @Override
    public void completeCachePutEvent(
            DiagnosticEvent cachePutEvent,
            SharedSessionContractImplementor session,
            CachedDomainDataAccess cachedDomainDataAccess,
            CollectionPersister persister,
            boolean cacheContentChanged,
            EventMonitor.CacheActionDescription description) {
        delegate.completeCachePutEvent(
                cachePutEvent, session, cachedDomainDataAccess, persister, cacheContentChanged, description);
    }

    @Override
    public DiagnosticEvent beginCacheGetEvent() {
        return delegate.beginCacheGetEvent();
    }

    @Override
    public void completeCacheGetEvent(
            DiagnosticEvent cacheGetEvent, SharedSessionContractImplementor session, Region region, boolean hit) {
        delegate.completeCacheGetEvent(cacheGetEvent, session, region, hit);
    }

    @Override
    public void completeCacheGetEvent(
            DiagnosticEvent cacheGetEvent,
            SharedSessionContractImplementor session,
            Region region,
            EntityPersister persister,
            boolean isNaturalKey,
            boolean hit) {
        delegate.completeCacheGetEvent(cacheGetEvent, session, region, persister, isNaturalKey, hit);
    }

    @Override
    public void completeCacheGetEvent(
            DiagnosticEvent cacheGetEvent,
            SharedSessionContractImplementor session,
            Region region,
            CollectionPersister persister,
            boolean hit) {
        delegate.completeCacheGetEvent(cacheGetEvent, session, region, persister, hit);
    }

    @Override
    public DiagnosticEvent beginFlushEvent() {
        return delegate.beginFlushEvent();
    }

    @Override
    public void completeFlushEvent(DiagnosticEvent flushEvent, org.hibernate.event.spi.FlushEvent event) {
        delegate.completeFlushEvent(flushEvent, event);
    }

    @Override
    public void completeFlushEvent(
            DiagnosticEvent flushEvent, org.hibernate.event.spi.FlushEvent event, boolean autoFlush) {
        delegate.completeFlushEvent(flushEvent, event, autoFlush);
    }

    @Override
    public DiagnosticEvent beginPartialFlushEvent() {
        return delegate.beginPartialFlushEvent();
    }

    @Override
    public void completePartialFlushEvent(DiagnosticEvent flushEvent, AutoFlushEvent event) {
        delegate.completePartialFlushEvent(flushEvent, event);
    }

    @Override
    public DiagnosticEvent beginDirtyCalculationEvent() {
        return delegate.beginDirtyCalculationEvent();
    }

    @Override
    public void completeDirtyCalculationEvent(
            DiagnosticEvent dirtyCalculationEvent,
            SharedSessionContractImplementor session,
            EntityPersister persister,
            EntityEntry entry,
            int[] dirtyProperties) {
        delegate.completeDirtyCalculationEvent(dirtyCalculationEvent, session, persister, entry, dirtyProperties);
    }

    @Override
    public DiagnosticEvent beginPrePartialFlush() {
        return delegate.beginPrePartialFlush();
    }

    @Override
    public void completePrePartialFlush(DiagnosticEvent prePartialFlush, SharedSessionContractImplementor session) {
        delegate.completePrePartialFlush(prePartialFlush, session);
    }

    @Override
    public DiagnosticEvent beginEntityInsertEvent() {
        return delegate.beginEntityInsertEvent();
    }

    @Override
    public void completeEntityInsertEvent(
            DiagnosticEvent event,
            Object id,
            String entityName,
            boolean success,
            SharedSessionContractImplementor session) {
        delegate.completeEntityInsertEvent(event, id, entityName, success, session);
    }

    @Override
    public DiagnosticEvent beginEntityUpdateEvent() {
        return delegate.beginEntityUpdateEvent();
    }

    @Override
    public void completeEntityUpdateEvent(
            DiagnosticEvent event,
            Object id,
            String entityName,
            boolean success,
            SharedSessionContractImplementor session) {
        delegate.completeEntityUpdateEvent(event, id, entityName, success, session);
    }

    @Override
    public DiagnosticEvent beginEntityUpsertEvent() {
        return delegate.beginEntityUpsertEvent();
    }

    @Override
    public void completeEntityUpsertEvent(
            DiagnosticEvent event,
            Object id,
            String entityName,
            boolean success,
            SharedSessionContractImplementor session) {
        delegate.completeEntityUpsertEvent(event, id, entityName, success, session);
    }

    @Override
    public DiagnosticEvent beginEntityDeleteEvent() {
        return delegate.beginEntityDeleteEvent();
    }

    @Override
    public void completeEntityDeleteEvent(
            DiagnosticEvent event,
            Object id,
            String entityName,
            boolean success,
            SharedSessionContractImplementor session) {
        delegate.completeEntityDeleteEvent(event, id, entityName, success, session);
    }

    @Override
    public DiagnosticEvent beginEntityLockEvent() {
        return delegate.beginEntityLockEvent();
    }

    @Override
    public void completeEntityLockEvent(
            DiagnosticEvent event,
            Object id,
            String entityName,
            LockMode lockMode,
            boolean success,
            SharedSessionContractImplementor session) {
        delegate.completeEntityLockEvent(event, id, entityName, lockMode, success, session);
    }

    @Override
    public DiagnosticEvent beginCollectionRecreateEvent() {
        return delegate.beginCollectionRecreateEvent();
    }

    @Override
    public void completeCollectionRecreateEvent(
            DiagnosticEvent event, Object id, String role, boolean success, SharedSessionContractImplementor session) {
        delegate.completeCollectionRecreateEvent(event, id, role, success, session);
    }

    @Override
    public DiagnosticEvent beginCollectionUpdateEvent() {
        return delegate.beginCollectionUpdateEvent();
    }

    @Override
    public void completeCollectionUpdateEvent(
            DiagnosticEvent event, Object id, String role, boolean success, SharedSessionContractImplementor session) {
        delegate.completeCollectionUpdateEvent(event, id, role, success, session);
    }

    @Override
    public DiagnosticEvent beginCollectionRemoveEvent() {
        return delegate.beginCollectionRemoveEvent();
    }

    @Override
    public void completeCollectionRemoveEvent(
            DiagnosticEvent event, Object id, String role, boolean success, SharedSessionContractImplementor session) {
        delegate.completeCollectionRemoveEvent(event, id, role, success, session);
    }
}
