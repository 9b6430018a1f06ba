//! The SQL types the lab runs, as the parser spells them.

use operators::value::DataType;
use sqlparser::ast;

pub(crate) const SUPPORTED_TYPES: &str =
    "INT, BIGINT, STRING (or VARCHAR), DOUBLE, BOOLEAN, TIMESTAMP(3), TIMESTAMP_LTZ(3)";

/// The lab type of a SQL type, if it has one.
pub(crate) fn lab_type(t: &ast::DataType) -> Option<DataType> {
    use ast::DataType as T;
    Some(match t {
        T::Timestamp(Some(3), ast::TimezoneInfo::None) => DataType::Timestamp,
        T::Custom(name, args)
            if name.to_string().eq_ignore_ascii_case("TIMESTAMP_LTZ")
                && args.len() == 1
                && args[0].to_string() == "3" =>
        {
            DataType::TimestampLtz
        }
        T::Int(_) | T::Integer(_) => DataType::Int,
        T::BigInt(_) => DataType::BigInt,
        T::String(_) | T::Varchar(_) | T::CharacterVarying(_) => DataType::String,
        T::Double(_) | T::DoublePrecision => DataType::Double,
        T::Boolean | T::Bool => DataType::Boolean,
        _ => return None,
    })
}
