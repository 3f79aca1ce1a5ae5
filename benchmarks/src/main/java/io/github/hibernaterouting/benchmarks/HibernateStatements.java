package io.github.hibernaterouting.benchmarks;

import java.util.List;

/** Fifty statements in the shape Hibernate ORM 7 generates for PostgreSQL: the benchmark's workload. */
final class HibernateStatements {

    private HibernateStatements() {}

    static final List<String> ALL = List.of(
            "select u1_0.id,u1_0.email,u1_0.name,u1_0.version from users u1_0 where u1_0.id=?",
            "select u1_0.id,u1_0.email,u1_0.name,u1_0.version from users u1_0 where u1_0.email=?",
            "select o1_0.id,o1_0.created_at,o1_0.customer_id,o1_0.status,o1_0.total,o1_0.version from orders o1_0 where o1_0.id=?",
            "select o1_0.id,o1_0.created_at,c1_0.id,c1_0.email,c1_0.name,o1_0.status,o1_0.total from orders o1_0 join customers c1_0 on c1_0.id=o1_0.customer_id where o1_0.id=?",
            "select l1_0.order_id,l1_0.id,l1_0.price,l1_0.product_id,l1_0.quantity from order_lines l1_0 where l1_0.order_id=?",
            "select p1_0.id,p1_0.name,p1_0.price,p1_0.sku from products p1_0 where p1_0.id in (?,?,?,?,?)",
            "select p1_0.id,p1_0.name,p1_0.price from products p1_0 where lower(p1_0.name) like ? escape '\\' order by p1_0.name offset ? rows fetch first ? rows only",
            "select u1_0.id,u1_0.name from users u1_0 order by u1_0.created_at desc fetch first ? rows only",
            "select count(u1_0.id) from users u1_0 where u1_0.active=?",
            "select count(*) from orders o1_0 where o1_0.customer_id=? and o1_0.status<>?",
            "select o1_0.id,o1_0.total from orders o1_0 left join order_lines l1_0 on o1_0.id=l1_0.order_id where l1_0.product_id=? group by o1_0.id,o1_0.total having count(l1_0.id)>?",
            "select c1_0.id,c1_0.name,sum(o1_0.total) from customers c1_0 join orders o1_0 on c1_0.id=o1_0.customer_id where o1_0.created_at between ? and ? group by c1_0.id,c1_0.name order by 3 desc fetch first ? rows only",
            "select u1_0.id from users u1_0 where exists(select 1 from orders o1_0 where o1_0.customer_id=u1_0.id and o1_0.status=?)",
            "select a1_0.id,a1_0.city,a1_0.street,a1_0.zip from addresses a1_0 where a1_0.user_id=?",
            "select r1_0.user_id,r1_1.id,r1_1.name from user_roles r1_0 join roles r1_1 on r1_1.id=r1_0.role_id where r1_0.user_id=?",
            "select t1_0.id,t1_0.name from tags t1_0 where t1_0.id=any(?)",
            "select p1_0.id,p1_0.attributes from products p1_0 where p1_0.attributes @> cast(? as jsonb)",
            "select e1_0.id,e1_0.payload,e1_0.type from outbox_events e1_0 where e1_0.published=false order by e1_0.id fetch first ? rows only",
            "select d1_0.id,d1_0.title,d1_0.updated_at from documents d1_0 where d1_0.owner_id=? and d1_0.updated_at>? order by d1_0.updated_at",
            "select s1_0.id,s1_0.expires_at,s1_0.token from sessions s1_0 where s1_0.token=?",
            "select u1_0.id,u1_0.name,p1_0.id,p1_0.bio from users u1_0 left join profiles p1_0 on u1_0.id=p1_0.user_id where u1_0.id=?",
            "select i1_0.id,i1_0.amount,i1_0.due_date from invoices i1_0 where i1_0.due_date<current_date and i1_0.paid=false",
            "select m1_0.id,m1_0.body,m1_0.sent_at from messages m1_0 where m1_0.thread_id=? order by m1_0.sent_at offset ? rows fetch first ? rows only",
            "select extract(year from o1_0.created_at),count(*) from orders o1_0 group by extract(year from o1_0.created_at)",
            "select u1_0.id,u1_0.name from users u1_0 where u1_0.id=? for update",
            "select u1_0.id,u1_0.version from users u1_0 where u1_0.id=? for no key update of u1_0",
            "select j1_0.id,j1_0.payload from jobs j1_0 where j1_0.state=? order by j1_0.id fetch first ? rows only for update skip locked",
            "select a1_0.id,a1_0.balance from accounts a1_0 where a1_0.id=? for share",
            "select nextval('users_seq')",
            "select nextval('orders_seq')",
            "insert into users (email,name,version,id) values (?,?,?,?)",
            "insert into orders (created_at,customer_id,status,total,version,id) values (?,?,?,?,?,?)",
            "insert into order_lines (order_id,price,product_id,quantity,id) values (?,?,?,?,?)",
            "insert into outbox_events (payload,published,type) values (?,?,?) returning id",
            "insert into audit_log (action,actor_id,at,entity) values (?,?,?,?)",
            "update users set email=?,name=?,version=? where id=? and version=?",
            "update orders set status=?,total=?,version=? where id=? and version=?",
            "update jobs set state=? where id=?",
            "update products set price=? where sku=?",
            "delete from order_lines where order_id=?",
            "delete from sessions where id=?",
            "delete from users where id=? and version=?",
            "delete from outbox_events where published=true and created_at<?",
            "with recursive c(id,parent_id,depth) as (select c1_0.id,c1_0.parent_id,0 from categories c1_0 where c1_0.parent_id is null union all select c2_0.id,c2_0.parent_id,c.depth+1 from categories c2_0 join c on c2_0.parent_id=c.id) select c.id,c.depth from c",
            "/* load com.example.User */ select u1_0.id,u1_0.email,u1_0.name from users u1_0 where u1_0.id=?",
            "/* dynamic native SQL query */ select count(*) from users where created_at > now() - interval '1 day'",
            "select p1_0.id,p1_0.name,coalesce(p1_0.discount,0) from products p1_0 where p1_0.category_id=? and p1_0.price between ? and ?",
            "select u1_0.id,row_number() over(partition by u1_0.team_id order by u1_0.score desc) from users u1_0",
            "merge into inventory i using (select ? as sku,? as qty) s on i.sku=s.sku when matched then update set qty=i.qty+s.qty when not matched then insert (sku,qty) values (s.sku,s.qty)",
            "truncate table staging_rows");
}
