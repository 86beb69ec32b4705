//! The store's values ([`Sql`]) bound to and read from PostgreSQL's typed
//! columns: a parameter takes the type the server gave its place (a bool
//! column's `1` binds as `true`, a time column's microseconds as a
//! `timestamptz`), and a column reads back as the store keeps the value
//! (times as microseconds since the Unix epoch, bools as 0/1, a file's
//! `bytea` as its bytes).

use std::error::Error;

use bytes::BytesMut;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use crate::values::Sql;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

type Failure = Box<dyn Error + Sync + Send>;

/// Whether a column of type `ty` holds a store value, bound or read.
fn is_store_type(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::INT8
            | Type::INT4
            | Type::FLOAT8
            | Type::BOOL
            | Type::TIMESTAMPTZ
            | Type::TEXT
            | Type::VARCHAR
            | Type::BYTEA
    )
}

fn mismatch(value: &Sql, ty: &Type) -> Failure {
    format!("the store cannot bind {value:?} as {ty}").into()
}

impl ToSql for Sql {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failure> {
        match (self, ty) {
            (Sql::Null, _) => Ok(IsNull::Yes),
            (Sql::Integer(i), &Type::INT8) => i.to_sql(ty, out),
            (Sql::Integer(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Sql::Integer(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Sql::Integer(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Sql::Integer(i), &Type::TIMESTAMPTZ) => {
                out.extend_from_slice(&(i - PG_EPOCH_MICROS).to_be_bytes());
                Ok(IsNull::No)
            }
            (Sql::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Sql::Real(f), &Type::INT8) => (*f as i64).to_sql(ty, out),
            (Sql::Text(s), &Type::TEXT | &Type::VARCHAR) => s.to_sql(ty, out),
            (Sql::Blob(b), &Type::BYTEA) => b.to_sql(ty, out),
            (value, ty) => Err(mismatch(value, ty)),
        }
    }

    fn accepts(ty: &Type) -> bool {
        is_store_type(ty)
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Sql {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Sql, Failure> {
        Ok(match *ty {
            Type::INT8 => Sql::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => Sql::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::FLOAT8 => Sql::Real(f64::from_sql(ty, raw)?),
            Type::BOOL => Sql::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::TIMESTAMPTZ => {
                let bytes: [u8; 8] = raw.try_into()?;
                Sql::Integer(i64::from_be_bytes(bytes) + PG_EPOCH_MICROS)
            }
            Type::BYTEA => Sql::Blob(raw.to_vec()),
            _ => Sql::Text(String::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Sql, Failure> {
        Ok(Sql::Null)
    }

    fn accepts(ty: &Type) -> bool {
        is_store_type(ty)
    }
}
