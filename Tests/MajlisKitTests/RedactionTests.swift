import MajlisKit
import Synchronization
import Testing

@Suite struct RedactionTests {
    static let jwt = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiJhbGljZSIsImV4cCI6OTk5OTk5OTk5OX0.abc_DEF-123"

    @Test func credentialsNeverReachTheLog() {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "t", level: .trace) { record in lines.withLock { $0.append(record.message) } }
        logger.info("hello with token \(Self.jwt) done")
        logger.debug(#"sent {"id":1,"op":"hello","args":{"token":"opaque-value-42"}}"#)
        logger.warning("majlis token --key k --secret hunter2 --user u")
        logger.error("url ws://h/v1/signal?access_token=abc123&room=r1")
        logger.info("password: letmein, user: alice")
        let all = lines.withLock { $0 }.joined(separator: "\n")
        for secret in [Self.jwt, "opaque-value-42", "hunter2", "abc123", "letmein"] {
            #expect(!all.contains(secret), "\(secret) leaked: \(all)")
        }
        #expect(all.contains("user: alice"))
        #expect(all.contains("room=r1"))
        #expect(all.components(separatedBy: Redaction.mask).count - 1 == 5)
    }

    @Test func disabledLevelsCostNothing() {
        let logger = Logger(label: "t", level: .error) { _ in Issue.record("should not log") }
        logger.debug({ () -> String in
            Issue.record("the message was built")
            return ""
        }())
    }
}
