// The script of shed's passkeys, served at /_shed/passkeys.js. It hands the
// options shed's host sends to the browser's passkey dialog
// (navigator.credentials.create or .get) and sends the answer back; shed
// decides everything. Byte strings travel as base64url both ways.
//
//   form[data-passkey-add]       the account page's "Add a passkey"
//   button[data-passkey-sign-in] "Sign in with a passkey"
//   #passkey-said                where a refusal's sentence is shown

const bytes = (text) => {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const padded = base64 + "===".slice((base64.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0)).buffer;
};

const text = (buffer) => {
  let binary = "";
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

const said = () => document.getElementById("passkey-said");

function say(sentence) {
  const place = said();
  place.textContent = sentence;
  place.className = "refused";
  place.hidden = false;
}

// POSTs JSON to shed: its answer, or an error carrying shed's sentence.
async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(answer.error || `shed answered ${response.status} — reload the page and try again`);
  }
  return answer;
}

// The browser's own refusals, in words a person can act on.
function browserSaid(error) {
  if (error.name === "NotAllowedError") {
    return "the passkey dialog was closed or timed out — press the button again";
  }
  if (error.name === "InvalidStateError") {
    return "this device holds a passkey of yours for this shed already — it is listed above";
  }
  return error.message;
}

function credentialList(list) {
  return (list || []).map((credential) => ({ ...credential, id: bytes(credential.id) }));
}

async function addPasskey(form) {
  const name = form.elements.name.value;
  const started = await post("/_shed/passkeys/add/start", { name });
  const options = started.options.publicKey;
  options.challenge = bytes(options.challenge);
  options.user.id = bytes(options.user.id);
  options.excludeCredentials = credentialList(options.excludeCredentials);
  let made;
  try {
    made = await navigator.credentials.create({ publicKey: options });
  } catch (error) {
    throw new Error(browserSaid(error));
  }
  await post("/_shed/passkeys/add/finish", {
    ceremony: started.ceremony,
    credential: {
      id: made.id,
      rawId: text(made.rawId),
      type: made.type,
      response: {
        attestationObject: text(made.response.attestationObject),
        clientDataJSON: text(made.response.clientDataJSON),
        transports: made.response.getTransports ? made.response.getTransports() : undefined,
      },
      extensions: made.getClientExtensionResults(),
    },
  });
  location.assign("/account");
}

async function signIn() {
  const started = await post("/_shed/passkeys/sign-in/start", {});
  const options = started.options.publicKey;
  options.challenge = bytes(options.challenge);
  options.allowCredentials = credentialList(options.allowCredentials);
  let used;
  try {
    used = await navigator.credentials.get({ publicKey: options });
  } catch (error) {
    throw new Error(browserSaid(error));
  }
  const answer = await post("/_shed/passkeys/sign-in/finish", {
    ceremony: started.ceremony,
    credential: {
      id: used.id,
      rawId: text(used.rawId),
      type: used.type,
      response: {
        authenticatorData: text(used.response.authenticatorData),
        clientDataJSON: text(used.response.clientDataJSON),
        signature: text(used.response.signature),
        userHandle: used.response.userHandle ? text(used.response.userHandle) : null,
      },
      extensions: used.getClientExtensionResults(),
    },
  });
  location.assign(answer.go);
}

function guarded(act) {
  if (!window.PublicKeyCredential || !navigator.credentials) {
    say("this browser offers no passkeys — sign in with a link instead");
    return;
  }
  act().catch((error) => say(error.message));
}

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-passkey-add]");
  if (!form) return;
  event.preventDefault();
  guarded(() => addPasskey(form));
});

document.addEventListener("click", (event) => {
  if (!event.target.closest("button[data-passkey-sign-in]")) return;
  guarded(signIn);
});
