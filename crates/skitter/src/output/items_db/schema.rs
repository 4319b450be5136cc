//! The tables of the items database: their columns and SQL types in each
//! dialect, the check of a table that already exists, and the conversion of an
//! item's JSON values into typed cells.
//!
//! Every rule set is one table with three fixed columns, then one typed column
//! per field, in the rule set's order:
//!
//! | column | SQLite | PostgreSQL |
//! |---|---|---|
//! | `page_url` | `TEXT NOT NULL` | `TEXT NOT NULL` |
//! | `item_index` | `INTEGER NOT NULL` | `BIGINT NOT NULL` |
//! | `fetched_at` | `TEXT NOT NULL` (RFC 3339, UTC) | `TIMESTAMPTZ NOT NULL` |
//! | text, url field | `TEXT` | `TEXT` |
//! | integer field | `INTEGER` | `BIGINT` |
//! | number field | `REAL` | `DOUBLE PRECISION` |
//! | json field | `TEXT` (JSON) | `JSONB` |
//!
//! with `PRIMARY KEY (page_url, item_index)`. A value that does not fit its
//! column (a string in an integer column, a float or an integer beyond 64 bits
//! in an integer column) is stored as `NULL` and counted; a text or url column
//! takes any value, non-strings as their JSON text.
//!
//! A NUL character (U+0000) in a text value, or in a string or key of a JSON
//! value, becomes U+FFFD: PostgreSQL refuses NUL in `TEXT` and `JSONB`, and
//! SQLite, which would store it, gets the same value so that a query gives the
//! same answer on either database (many SQLite tools also cut text at a NUL).

use crate::parse::items::{ColumnType, TableSchema};

use super::ItemsDbError;

/// The columns every table starts with, which no field may be named.
pub(crate) const FIXED_COLUMNS: [&str; 3] = ["page_url", "item_index", "fetched_at"];

/// The SQL dialect of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The SQL type of a field's column.
    pub(crate) fn column_type(self, ty: ColumnType) -> &'static str {
        match (self, ty) {
            (_, ColumnType::Text | ColumnType::Url) => "TEXT",
            (Dialect::Sqlite, ColumnType::Integer) => "INTEGER",
            (Dialect::Postgres, ColumnType::Integer) => "BIGINT",
            (Dialect::Sqlite, ColumnType::Number) => "REAL",
            (Dialect::Postgres, ColumnType::Number) => "DOUBLE PRECISION",
            (Dialect::Sqlite, ColumnType::Json) => "TEXT",
            (Dialect::Postgres, ColumnType::Json) => "JSONB",
        }
    }

    /// The SQL types of the fixed columns, in [`FIXED_COLUMNS`] order.
    fn fixed_types(self) -> [&'static str; 3] {
        match self {
            Dialect::Sqlite => ["TEXT", "INTEGER", "TEXT"],
            Dialect::Postgres => ["TEXT", "BIGINT", "TIMESTAMPTZ"],
        }
    }

    /// Whether a type the database reports for an existing column is `wanted`
    /// (SQLite reports the declared type; PostgreSQL its `format_type` name).
    fn same_type(self, found: &str, wanted: &str) -> bool {
        let found = found.trim().to_ascii_uppercase();
        match (self, wanted) {
            (Dialect::Postgres, "TIMESTAMPTZ") => found == "TIMESTAMP WITH TIME ZONE",
            _ => found == wanted,
        }
    }

    /// `CREATE TABLE IF NOT EXISTS` for `table`.
    pub(crate) fn create_table(self, table: &TableSchema) -> String {
        let mut sql = format!("CREATE TABLE IF NOT EXISTS {} (", quote(&table.name));
        for (name, ty) in FIXED_COLUMNS.iter().zip(self.fixed_types()) {
            sql.push_str(&format!("{} {ty} NOT NULL, ", quote(name)));
        }
        for column in &table.columns {
            let ty = self.column_type(column.ty);
            sql.push_str(&format!("{} {ty}, ", quote(&column.name)));
        }
        sql.push_str("PRIMARY KEY (page_url, item_index))");
        sql
    }

    /// What to do with an existing table whose columns are `existing` (name and
    /// type as the database reports them): the `ALTER TABLE` statements adding
    /// the fields it lacks, or an error when a column's type conflicts.
    pub(crate) fn plan_growth(
        self,
        target: &str,
        table: &TableSchema,
        existing: &[(String, String)],
    ) -> Result<Vec<String>, ItemsDbError> {
        // SQLite matches names case-insensitively; PostgreSQL, quoted, exactly.
        let find = |name: &str| {
            existing.iter().find(|(n, _)| match self {
                Dialect::Sqlite => n.eq_ignore_ascii_case(name),
                Dialect::Postgres => n == name,
            })
        };
        let check = |name: &str, wanted: &'static str| match find(name) {
            Some((_, found)) if !self.same_type(found, wanted) => Err(ItemsDbError::ColumnType {
                target: target.to_string(),
                table: table.name.clone(),
                column: name.to_string(),
                found: found.clone(),
                wanted,
            }),
            found => Ok(found.is_some()),
        };
        for (name, ty) in FIXED_COLUMNS.iter().zip(self.fixed_types()) {
            if !check(name, ty)? {
                return Err(ItemsDbError::Schema {
                    target: target.to_string(),
                    message: format!(
                        "table {} exists but is not an items table: it has no column {name}",
                        table.name
                    ),
                });
            }
        }
        let mut alters = Vec::new();
        for column in &table.columns {
            let ty = self.column_type(column.ty);
            if !check(&column.name, ty)? {
                alters.push(format!(
                    "ALTER TABLE {} ADD COLUMN {} {ty}",
                    quote(&table.name),
                    quote(&column.name)
                ));
            }
        }
        Ok(alters)
    }
}

/// `name` as a quoted SQL identifier (both dialects use standard double quotes).
pub(crate) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Checks the schemas before anything touches the database: names not empty,
/// no table twice, no column twice or named like a fixed column.
pub(crate) fn validate(target: &str, schemas: &[TableSchema]) -> Result<(), ItemsDbError> {
    let bad = |message: String| ItemsDbError::Schema {
        target: target.to_string(),
        message,
    };
    for (i, table) in schemas.iter().enumerate() {
        if table.name.is_empty() || table.name.contains('\0') {
            return Err(bad(format!("rule set {i} has an unusable table name")));
        }
        if schemas[..i]
            .iter()
            .any(|t| t.name.eq_ignore_ascii_case(&table.name))
        {
            return Err(bad(format!("two rule sets make table {}", table.name)));
        }
        for (j, column) in table.columns.iter().enumerate() {
            let name = &column.name;
            if name.is_empty() || name.contains('\0') {
                return Err(bad(format!(
                    "table {}: a field has no usable name",
                    table.name
                )));
            }
            if FIXED_COLUMNS.iter().any(|f| f.eq_ignore_ascii_case(name)) {
                return Err(bad(format!(
                    "table {}: field {name} has the name of a fixed column ({})",
                    table.name,
                    FIXED_COLUMNS.join(", ")
                )));
            }
            if table.columns[..j]
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(name))
            {
                return Err(bad(format!("table {}: field {name} twice", table.name)));
            }
        }
    }
    Ok(())
}

/// One value ready for its column.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    Text(String),
    Integer(i64),
    Number(f64),
    /// Compact JSON text (SQLite stores it as is, PostgreSQL parses it to JSONB).
    Json(String),
}

impl Cell {
    /// Converts `value` for a column of type `ty`; `None` when it does not fit
    /// (the caller stores `NULL` and counts it).
    pub(crate) fn convert(ty: ColumnType, value: &serde_json::Value) -> Option<Cell> {
        use serde_json::Value;
        Some(match (ty, value) {
            (_, Value::Null) => Cell::Null,
            (ColumnType::Text | ColumnType::Url, Value::String(s)) => Cell::Text(without_nul(s)),
            (ColumnType::Text | ColumnType::Url, other) => Cell::Text(json_without_nul(other)),
            (ColumnType::Integer, Value::Number(n)) => Cell::Integer(n.as_i64()?),
            (ColumnType::Number, Value::Number(n)) => Cell::Number(n.as_f64()?),
            (ColumnType::Json, other) => Cell::Json(json_without_nul(other)),
            (ColumnType::Integer | ColumnType::Number, _) => return None,
        })
    }
}

/// `s` with every NUL replaced by U+FFFD (see the module documentation).
fn without_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

/// `value` as compact JSON text, NUL replaced by U+FFFD in every string and
/// key. The text of a value without NUL is used as it is: a NUL can only be
/// in it as the escape `\u0000` (serde_json escapes control characters).
fn json_without_nul(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if !text.contains("\\u0000") {
        return text;
    }
    fn clean(value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(without_nul(s)),
            Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (without_nul(k), clean(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    clean(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::items::Column;
    use serde_json::json;

    fn table(columns: &[(&str, ColumnType)]) -> TableSchema {
        TableSchema {
            name: "products".into(),
            columns: columns
                .iter()
                .map(|(n, ty)| Column {
                    name: n.to_string(),
                    ty: *ty,
                })
                .collect(),
        }
    }

    #[test]
    fn values_fit_their_columns_or_do_not() {
        use ColumnType::*;
        let cases = [
            (Text, json!("a"), Some(Cell::Text("a".into()))),
            (Text, json!(3), Some(Cell::Text("3".into()))),
            (Url, json!(["x"]), Some(Cell::Text("[\"x\"]".into()))),
            (Integer, json!(-7), Some(Cell::Integer(-7))),
            (Integer, json!(1.5), None),
            (Integer, json!(u64::MAX), None),
            (Integer, json!("7"), None),
            (Number, json!(7), Some(Cell::Number(7.0))),
            (Number, json!(2.5), Some(Cell::Number(2.5))),
            (Number, json!(true), None),
            (Json, json!([1, "a"]), Some(Cell::Json("[1,\"a\"]".into()))),
            (Json, json!(null), Some(Cell::Null)),
            (Integer, json!(null), Some(Cell::Null)),
            (Text, json!("a\0b"), Some(Cell::Text("a\u{FFFD}b".into()))),
            (
                Url,
                json!(["\0"]),
                Some(Cell::Text("[\"\u{FFFD}\"]".into())),
            ),
            (
                Json,
                json!({"k\0": ["v\0", 1]}),
                Some(Cell::Json("{\"k\u{FFFD}\":[\"v\u{FFFD}\",1]}".into())),
            ),
            // A backslash before `u0000` is an escaped backslash, not a NUL.
            (
                Json,
                json!("\\u0000"),
                Some(Cell::Json("\"\\\\u0000\"".into())),
            ),
        ];
        for (ty, value, want) in cases {
            assert_eq!(Cell::convert(ty, &value), want, "{ty:?} {value}");
        }
    }

    #[test]
    fn create_quotes_and_types_per_dialect() {
        let t = table(&[("name", ColumnType::Text), ("price", ColumnType::Number)]);
        assert_eq!(
            Dialect::Postgres.create_table(&t),
            "CREATE TABLE IF NOT EXISTS \"products\" (\"page_url\" TEXT NOT NULL, \
             \"item_index\" BIGINT NOT NULL, \"fetched_at\" TIMESTAMPTZ NOT NULL, \
             \"name\" TEXT, \"price\" DOUBLE PRECISION, PRIMARY KEY (page_url, item_index))"
        );
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn growth_adds_missing_columns_and_refuses_conflicts() {
        let t = table(&[("name", ColumnType::Text), ("qty", ColumnType::Integer)]);
        let mut existing: Vec<(String, String)> = [
            ("page_url", "text"),
            ("item_index", "bigint"),
            ("fetched_at", "timestamp with time zone"),
            ("name", "text"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let alters = Dialect::Postgres.plan_growth("db", &t, &existing).unwrap();
        assert_eq!(
            alters,
            ["ALTER TABLE \"products\" ADD COLUMN \"qty\" BIGINT"]
        );
        existing.push(("qty".into(), "text".into()));
        let err = Dialect::Postgres
            .plan_growth("db", &t, &existing)
            .unwrap_err();
        assert!(err.to_string().contains("qty"), "{err}");
        existing.remove(0);
        let err = Dialect::Postgres
            .plan_growth("db", &t, &existing)
            .unwrap_err();
        assert!(err.to_string().contains("page_url"), "{err}");
    }

    #[test]
    fn schemas_with_clashing_names_are_refused() {
        let bad = [
            vec![table(&[("page_url", ColumnType::Text)])],
            vec![table(&[("a", ColumnType::Text), ("A", ColumnType::Text)])],
            vec![table(&[]), table(&[])],
            vec![table(&[("", ColumnType::Text)])],
        ];
        for schemas in bad {
            assert!(validate("db", &schemas).is_err(), "{schemas:?}");
        }
        assert!(validate("db", &[table(&[("a", ColumnType::Json)])]).is_ok());
    }
}
