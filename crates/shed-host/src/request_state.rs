//! An approval asked of a 2026-07-28 client: that revision holds no session,
//! so the call answers `input_required` with a `requestState` the client
//! echoes when it calls again with the person's answer — and any server of
//! the database may get that retry. The state names the approval kept for
//! the call (its row, in the shared database) and is bound to the caller
//! (who asked), the command and its exact arguments (their sha256), and a
//! short life ([`REQUEST_STATE_SECONDS`]); it is signed with HMAC-SHA256 under
//! the key every server of the database shares (made once, kept in the
//! store). The retry is verified here, then decides the approval in the
//! store's one statement (`decide_approval`), so a replayed state finds it
//! decided and runs nothing; a tampered one, one past its life, one for
//! another caller, command or arguments is refused with a sentence.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::answer::{Answer, ApprovalState};
use crate::{Caller, Host, HostError};

/// How long a request state may be answered, in seconds: long enough for a
/// person to read the form and decide.
pub const REQUEST_STATE_SECONDS: i64 = 600;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// sha256 hex of a call's arguments as JSON (serde_json writes an object's
/// keys in one order, so the same arguments hash the same).
fn args_hash(args: &Value) -> String {
    hex::encode(Sha256::digest(args.to_string().as_bytes()))
}

fn refused(why: &str) -> HostError {
    HostError::BadInput(format!(
        "{why} — nothing ran; call the command again without requestState and inputResponses to be asked anew"
    ))
}

impl Host {
    /// The key request states are signed with: the database's, made by the
    /// first server to ask.
    async fn signing_key(&self) -> Result<Vec<u8>, HostError> {
        let fresh: [u8; 32] = rand::random();
        Ok(self.inner.store.approval_key(fresh.to_vec()).await?)
    }

    /// The request state for approval `waiting`, asked by `caller` through
    /// `command` with `args`.
    pub async fn approval_request_state(
        &self,
        caller: &Caller,
        waiting: &ApprovalState,
        command: &str,
        args: &Value,
    ) -> Result<String, HostError> {
        let asker = caller.asker().ok_or_else(crate::access::sign_in_first)?;
        let payload = json!({
            "approval": waiting.approval,
            "asker": asker,
            "command": command,
            "args": args_hash(args),
            "expires": jiff::Timestamp::now().as_second() + REQUEST_STATE_SECONDS,
        })
        .to_string();
        let mac = hmac_sha256(&self.signing_key().await?, payload.as_bytes());
        Ok(format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(mac)
        ))
    }

    /// The retry of `command` with `args` by `caller`, echoing `state` with
    /// the person's answer (`approve`): verified, then decided once; the
    /// approval's outcome.
    pub async fn answer_request_state(
        &self,
        caller: &Caller,
        state: &str,
        command: &str,
        args: &Value,
        approve: bool,
    ) -> Result<Answer<ApprovalState>, HostError> {
        let not_signed = || refused("the requestState is not one shed made");
        let (payload, mac) = state.split_once('.').ok_or_else(not_signed)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| not_signed())?;
        let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| not_signed())?;
        let expected = hmac_sha256(&self.signing_key().await?, &payload);
        if !bool::from(expected.as_slice().ct_eq(&mac)) {
            return Err(not_signed());
        }
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| not_signed())?;
        let id = payload["approval"].as_i64().ok_or_else(not_signed)?;
        if payload["expires"].as_i64().unwrap_or(0) <= jiff::Timestamp::now().as_second() {
            return Err(refused("the requestState has expired"));
        }
        if payload["asker"].as_str() != caller.asker().as_deref() {
            return Err(refused("the requestState was made for another caller"));
        }
        if payload["command"].as_str() != Some(command)
            || payload["args"].as_str() != Some(args_hash(args).as_str())
        {
            return Err(refused(
                "the requestState was made for another command or other arguments",
            ));
        }
        match self.decide_in_client(caller, id, approve).await {
            Err(HostError::Conflict(_) | HostError::ChangedSince(_)) => {
                return Err(refused("the requestState was answered already"));
            }
            other => other?,
        };
        self.approval_outcome(caller, id).await
    }
}

#[cfg(test)]
mod tests {
    use super::hmac_sha256;

    // RFC 4231, test case 2.
    #[test]
    fn hmac_sha256_is_rfc_4231_s() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
