create table t (a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 100000)
insert into t select x, printf('row-%d-%x', x, x * 2654435761 % 4294967296), x / 7.0 from n;
create index tb on t(b);
select count(*), sum(a), max(b), round(avg(c), 3) from t;
