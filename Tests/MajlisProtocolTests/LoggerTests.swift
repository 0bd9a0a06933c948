import Foundation
import MajlisProtocol
import Synchronization
import Testing

/// The one logging front of the server and the SDK.
@Suite struct LoggerTests {
    @Test func jsonLinesKeepEventsAndFieldsAndNeverSecrets() throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "majlis", level: .info, format: .json) { line in lines.withLock { $0.append(line) } }
        logger.log(.warning, "login refused for token=abc.def", event: "auth.rejected", fields: ["user": "alice", "detail": "secret: hunter2"])
        logger.debug("not written")
        let written = lines.withLock { $0 }
        try #require(written.count == 1)
        #expect(written[0].hasSuffix("\n") && !written[0].dropLast().contains("\n"), "one line")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: String])
        #expect(object["event"] == "auth.rejected" && object["level"] == "warning" && object["label"] == "majlis" && object["user"] == "alice")
        #expect(object["time"] != nil)
        #expect(object["message"] == "login refused for token=\(Redaction.mask)")
        #expect(object["detail"] == "secret: \(Redaction.mask)")
    }

    @Test func textLinesAreForPeople() {
        let record = Logger.Record(
            time: Date(timeIntervalSince1970: 0), level: .error, label: "sdk", message: "media stopped", event: nil, fields: ["room": "r1", "code": "4003"])
        #expect(Logger.line(record, format: .text) == "1970-01-01T00:00:00Z error [sdk] media stopped (code=4003 room=r1)\n")
    }

    @Test func anAppsHandlerGetsRecordsAtItsLevelAndAbove() {
        let levels = Mutex<[LogLevel]>([])
        let logger = Logger(label: "app", level: .info) { record in levels.withLock { $0.append(record.level) } }
        logger.trace("t")
        logger.debug("d")
        logger.info("i")
        logger.warning("w")
        logger.error("e")
        Logger.silent.error("nowhere")
        #expect(levels.withLock { $0 } == [.info, .warning, .error])
        #expect(LogLevel(name: "warning") == .warning && LogLevel(name: "loud") == nil)
    }
}
