#pragma once

#include <string>

#include "base/errors.h"

struct ssl_ctx_st;
struct ssl_st;

namespace stockctl {

/// TLS settings, with redis-cli's names and meanings. TLS is used only when `enabled`.
struct TlsOptions {
  bool enabled = false;
  std::string cacert;     ///< --cacert: trust these CAs (PEM); else the system's store
  std::string cacertdir;  ///< --cacertdir: trust the CAs in this hashed directory
  std::string cert;       ///< --cert: client certificate (PEM)
  std::string key;        ///< --key: its private key (PEM)
  std::string sni;        ///< --sni: server name to send and to verify instead of the URL's host
  bool insecure = false;  ///< --insecure: verify neither the chain nor the name

  bool operator==(const TlsOptions& other) const;
};

/// A TLS failure a retry cannot cure (untrusted or expired certificate, wrong name, missing
/// client certificate, TLS spoken to a plain port or the reverse): exit 1, never retried. It is
/// deliberately not a ConnectionError, which callers retry.
class TlsError : public StockctlError {
 public:
  explicit TlsError(const std::string& message) : StockctlError(message) {}
};

/// The process's TLS context for these options, built once and shared by every connection
/// (cluster nodes, bench connections). Throws TlsError when a file cannot be used; the message
/// names the file, never its contents.
ssl_ctx_st* tls_context(const TlsOptions& options);

/// Sets SNI and the name or IP address to verify on a new session for `host`.
void tls_prepare(ssl_st* ssl, const TlsOptions& options, const std::string& host);

/// Why a TLS handshake or a TLS read failed, in words a person can act on. Reads (and clears)
/// OpenSSL's error queue and the session's verification result.
std::string tls_failure_reason(ssl_st* ssl, const TlsOptions& options, const std::string& host);

}  // namespace stockctl
