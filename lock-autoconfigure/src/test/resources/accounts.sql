create table account (id varchar(64) primary key, balance bigint not null);
