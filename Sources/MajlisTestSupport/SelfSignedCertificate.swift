import Foundation

/// A new self-signed certificate for 127.0.0.1 and its key, as PEM files made by the `openssl`
/// command: what a development server runs TLS with.
public struct SelfSignedCertificate: Sendable {
    public let certificate: String
    public let key: String

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes `NAME.pem` and `NAME-key.pem` into `directory`.
    public init(in directory: URL, name: String) throws {
        certificate = directory.appendingPathComponent("\(name).pem").path
        key = directory.appendingPathComponent("\(name)-key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let status = process.waitForExit()
        guard status == 0 else { throw Failure(description: "openssl could not make a certificate (status \(status))") }
    }
}
