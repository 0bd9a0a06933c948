import Foundation

/// Removes credentials from text before it is logged: JWTs wherever they appear, and the values
/// of JSON or key=value fields named like secrets (token, secret, password, key).
public enum Redaction {
    /// The text that replaces a credential.
    public static let mask = "[redacted]"

    private static let patterns: [NSRegularExpression] = [
        // JWTs: three base64url parts, the first starting with a JSON object ("eyJ").
        #"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"#,
        // "token": "...", "secret":"...", "password" : "..."
        #"(?i)("(?:[a-z_]*token|secret|password|api_?key)"\s*:\s*")[^"]*(")"#,
        // token=..., --secret ..., secret: ...
        #"(?i)((?:--)?(?:[a-z_]*token|secret|password|api_?key)(?:=|:\s*|\s+))[^\s,&"-][^\s,&"]*"#,
    ].compactMap { try? NSRegularExpression(pattern: $0) }

    /// `text` with every credential replaced by `mask`.
    public static func redact(_ text: String) -> String {
        var result = text
        for (index, pattern) in patterns.enumerated() {
            let range = NSRange(result.startIndex..., in: result)
            let template: String
            switch index {
            case 0: template = mask
            case 1: template = "$1\(mask)$2"
            default: template = "$1\(mask)"
            }
            result = pattern.stringByReplacingMatches(in: result, range: range, withTemplate: template)
        }
        return result
    }
}
