import Foundation
import MajlisCommandLine
import MajlisTransport

/// The development key's secret: made on the first start and kept in the data directory, so a
/// restarted development server accepts the tokens it minted before.
struct DevelopmentSecret {
    static let key = "devkey"
    static let fileName = "dev-secret"

    var value: String

    /// Reads the secret kept in `directory`, or makes one and keeps it there (readable by this user only).
    static func load(directory: String) throws -> DevelopmentSecret {
        let path = (directory as NSString).appendingPathComponent(fileName)
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.count >= 16, secret.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw Arguments.Failure(description: "\(path) does not hold a usable secret (16 or more characters); delete it to make a new one")
            }
            return DevelopmentSecret(value: secret)
        }
        let secret = HMACSHA256.randomSecret()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw Arguments.Failure(description: "cannot write \(path)")
            }
        } catch let failure as Arguments.Failure {
            throw failure
        } catch {
            throw Arguments.Failure(description: "cannot create --data \(directory): \(error.localizedDescription)")
        }
        return DevelopmentSecret(value: secret)
    }
}
