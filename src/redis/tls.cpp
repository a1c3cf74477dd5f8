#include "redis/tls.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace stockctl {
namespace {

struct CtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxFree>;

std::string openssl_reason() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  const char* why = last ? ERR_reason_error_string(last) : nullptr;
  return why ? why : "unknown error";
}

void load_trust(SSL_CTX* ctx, const TlsOptions& o) {
  if (o.cacert.empty() && o.cacertdir.empty()) {
    // The system's store; OpenSSL also honours SSL_CERT_FILE and SSL_CERT_DIR.
    SSL_CTX_set_default_verify_paths(ctx);
    return;
  }
  const char* file = o.cacert.empty() ? nullptr : o.cacert.c_str();
  const char* dir = o.cacertdir.empty() ? nullptr : o.cacertdir.c_str();
  if (SSL_CTX_load_verify_locations(ctx, file, dir) != 1) {
    const std::string& what = file ? o.cacert : o.cacertdir;
    throw TlsError(fmt::format("{} {}: cannot load CA certificates: {}",
                               file ? "--cacert" : "--cacertdir", what, openssl_reason()));
  }
}

void load_client_certificate(SSL_CTX* ctx, const TlsOptions& o) {
  if (o.cert.empty() && o.key.empty()) return;
  if (o.cert.empty() || o.key.empty()) throw TlsError("--cert and --key go together");
  if (SSL_CTX_use_certificate_chain_file(ctx, o.cert.c_str()) != 1) {
    throw TlsError(
        fmt::format("--cert {}: cannot load the certificate: {}", o.cert, openssl_reason()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, o.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw TlsError(fmt::format("--key {}: cannot load the key: {}", o.key, openssl_reason()));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    throw TlsError(fmt::format("--key {} does not belong to --cert {}", o.key, o.cert));
  }
}

CtxPtr make_context(const TlsOptions& o) {
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) throw TlsError(fmt::format("cannot set up TLS: {}", openssl_reason()));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
  // Redis, like most servers, may close without close_notify: that is a closed connection
  // (retryable), not a TLS failure.
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
  // Partial writes and a buffer that moves between retries, as a non-blocking socket needs.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx.get(), o.insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  if (!o.insecure) load_trust(ctx.get(), o);
  load_client_certificate(ctx.get(), o);
  return ctx;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string verify_reason(long result, const TlsOptions& o, const std::string& host) {
  const std::string name = o.sni.empty() ? host : o.sni;
  switch (result) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return "the server's certificate is not signed by a trusted CA (unknown CA); give the CA "
             "that signed it with --cacert or --cacertdir";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired; the server needs a renewed certificate";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet (check both machines' clocks)";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return fmt::format(
          "the server's certificate is not issued for '{}' (name mismatch); connect with a name "
          "the certificate holds, or name it with --sni",
          name);
    default:
      return fmt::format("the server's certificate was refused: {}",
                         X509_verify_cert_error_string(result));
  }
}

std::string alert_reason(int reason, const TlsOptions& o) {
  switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
      return "the server answers on this port, but not TLS (a plain port? use "
             "redis:// without --tls, or the server's TLS port)";
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      return "the server requires a client certificate; give one with --cert and --key";
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
      if (o.cert.empty()) {
        return "the server refused the handshake (does it require a client certificate? give "
               "one with --cert and --key)";
      }
      return "the server refused the handshake";
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return fmt::format("the server refused the client certificate --cert {} ({})", o.cert,
                         ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, reason)));
    default:
      return {};
  }
}

}  // namespace

bool TlsOptions::operator==(const TlsOptions& other) const {
  return enabled == other.enabled && cacert == other.cacert && cacertdir == other.cacertdir &&
         cert == other.cert && key == other.key && sni == other.sni && insecure == other.insecure;
}

SSL_CTX* tls_context(const TlsOptions& options) {
  // One process uses one set of options; the cache still keys on them, so a caller with other
  // settings never gets a context it did not ask for. Bench threads share it under the lock.
  static std::mutex lock;
  static std::vector<std::pair<TlsOptions, CtxPtr>> cache;
  std::lock_guard<std::mutex> hold(lock);
  for (auto& [o, ctx] : cache) {
    if (o == options) return ctx.get();
  }
  cache.emplace_back(options, make_context(options));
  return cache.back().second.get();
}

void tls_prepare(SSL* ssl, const TlsOptions& o, const std::string& host) {
  const std::string& name = o.sni.empty() ? host : o.sni;
  const bool ip = is_ip_literal(name);
  // SNI carries host names only (RFC 6066); an IP literal is verified against the IP SANs.
  if (!ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (o.insecure) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  }
}

std::string tls_failure_reason(SSL* ssl, const TlsOptions& o, const std::string& host) {
  const long verified = SSL_get_verify_result(ssl);
  if (!o.insecure && verified != X509_V_OK) {
    ERR_clear_error();
    return verify_reason(verified, o, host);
  }
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  if (last == 0) return {};
  if (ERR_GET_LIB(last) == ERR_LIB_SSL) {
    std::string why = alert_reason(ERR_GET_REASON(last), o);
    if (!why.empty()) return why;
  }
  const char* text = ERR_reason_error_string(last);
  return fmt::format("TLS error: {}", text ? text : "unknown");
}

}  // namespace stockctl
