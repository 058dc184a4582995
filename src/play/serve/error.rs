//! The API's errors and limits, shared by the routes ([`super::api`]) and the gate in front of
//! them ([`super::guard`]): every failure is a status and `{"error": "..."}` naming what is
//! wrong.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::engines::EngineError;
use super::games::GamesError;

/// An API failure: a status and a message for people.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub(super) fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}

impl From<GamesError> for ApiError {
    fn from(e: GamesError) -> ApiError {
        let status = match e {
            GamesError::Unknown(_) => StatusCode::NOT_FOUND,
            GamesError::Full(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let status = match e {
            EngineError::Unknown { .. } => StatusCode::BAD_REQUEST,
            EngineError::TimedOut(_) => StatusCode::SERVICE_UNAVAILABLE,
            EngineError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

/// The largest request body read; the API's bodies are a few hundred bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

pub(super) type ApiResult<T> = Result<T, ApiError>;
