import Foundation
import MajlisTransport

/// The signature on each post: header `Majlis-Signature: t=<unix seconds>,v1=<hex>`, where hex
/// is HMAC-SHA256 with the key's secret over `"<t>.<body>"`, and `Majlis-Key: <key id>`.
/// Receivers recompute it, compare in constant time, and refuse old timestamps.
public enum WebhookSignature {
    public static func header(body: String, secret: String, time: Int64) -> String {
        "t=\(time),v1=" + hex(body: body, secret: secret, time: time)
    }

    /// Whether `header` signs `body` with `secret`, made no more than `tolerance` seconds from `now`.
    public static func verify(header: String, body: String, secret: String, now: Int64, tolerance: Int64 = 300) -> Bool {
        var time: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { time = Int64(pair[1]) } else if pair[0] == "v1" { signatures.append(String(pair[1])) }
        }
        guard let time, abs(now - time) <= tolerance else { return false }
        let expected = Array(hex(body: body, secret: secret, time: time).utf8)
        return signatures.contains { HMACSHA256.equal(Array($0.utf8), expected) }
    }

    private static func hex(body: String, secret: String, time: Int64) -> String {
        HMACSHA256.mac(key: Array(secret.utf8), message: Array("\(time).\(body)".utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
