import Foundation
import MajlisProtocol

/// Access tokens: JWTs (RFC 7519) signed with HS256, the API key named by the header's `kid`.
public enum AccessToken {
    private struct Header: Codable {
        var alg: String
        var typ: String?
        var kid: String?
    }

    /// Signs `claims` with the API key `key` and its secret.
    public static func sign(_ claims: AccessClaims, key: String, secret: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = (try? encoder.encode(Header(alg: "HS256", typ: "JWT", kid: key))) ?? Data()
        let body = (try? encoder.encode(claims)) ?? Data()
        let input = Base64URL.encode(header) + "." + Base64URL.encode(body)
        let mac = HMACSHA256.mac(key: Array(secret.utf8), message: Array(input.utf8))
        return input + "." + Base64URL.encode(mac)
    }

    /// Verifies a token against the server's keys (`kid` -> secret) at `now` (Unix seconds).
    ///
    /// Refuses (`unauthorized`) a malformed token, an `alg` other than HS256, an unknown `kid`, a
    /// wrong signature, a bad `sub`, a time outside years 1970-9999 or a token not yet valid; an
    /// expired one is `token_expired`.
    public static func verify(_ token: String, keys: [String: String], now: Int64) throws(ProtocolError) -> AccessClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let bodyData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw ProtocolError(.unauthorized, "the token is not a JWT") }
        // Read before the signature is checked: by the server's own parser (linear, nesting
        // bounded), like everything else from outside.
        guard let value = try? JSONParser().parse(headerData), let header = try? JSONValueDecoder().decode(Header.self, from: value) else {
            throw ProtocolError(.unauthorized, "the token header is not valid JSON")
        }
        guard header.alg == "HS256" else { throw ProtocolError(.unauthorized, "token alg \(header.alg) is not HS256") }
        guard let kid = header.kid, let secret = keys[kid] else {
            throw ProtocolError(.unauthorized, "the token's kid names no key of this server")
        }
        let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard HMACSHA256.equal(HMACSHA256.mac(key: Array(secret.utf8), message: input), Array(signature)) else {
            throw ProtocolError(.unauthorized, "the token signature is wrong")
        }
        let claims: AccessClaims
        do {
            claims = try JSONDecoder().decode(AccessClaims.self, from: bodyData)
        } catch {
            throw ProtocolError(.unauthorized, "the token claims are invalid (sub and exp are required)")
        }
        guard Identifier.isValid(claims.sub) else {
            throw ProtocolError(.unauthorized, "the token sub must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -")
        }
        for (name, time) in [("exp", claims.exp), ("nbf", claims.nbf), ("iat", claims.iat)] {
            if let time, !AccessClaims.validTimes.contains(time) {
                throw ProtocolError(.unauthorized, "the token \(name) \(time) is not a Unix time in seconds between 1970 and 9999")
            }
        }
        if claims.exp <= now {
            throw ProtocolError(.tokenExpired, "the token expired at \(Self.utc(claims.exp)) (\(Self.span(now - claims.exp)) ago); mint a new one")
        }
        if let nbf = claims.nbf, nbf > now {
            throw ProtocolError(.unauthorized, "the token is not valid before \(Self.utc(nbf)) (in \(Self.span(nbf - now))); check the clocks")
        }
        return claims
    }

    /// A Unix time as "2026-11-30 14:05:09 UTC".
    static func utc(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d UTC", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// A duration in words: "42 s", "7 min", "3 h", "2 days".
    static func span(_ seconds: Int64) -> String {
        switch seconds {
        case ..<120: return "\(seconds) s"
        case ..<7200: return "\(seconds / 60) min"
        case ..<172_800: return "\(seconds / 3600) h"
        default: return "\(seconds / 86_400) days"
        }
    }
}
