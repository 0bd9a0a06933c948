import Foundation
import MajlisKit
import MajlisProtocol
import Testing

/// The client's own log: bounded, redacted, by time, and kept across runs in a file that tells
/// whether the last run ended cleanly.
struct ClientLogTests {
    func record(_ message: String, at ms: Int64, level: LogLevel = .info) -> Logger.Record {
        Logger.Record(time: Date(timeIntervalSince1970: Double(ms) / 1_000), level: level, label: "app", message: message)
    }

    @Test func theNewestLinesAreKeptWithinItsCapacityWithoutSecrets() {
        let log = ClientLog(capacity: 400)
        for index in 0..<20 { log.keep(record("line \(index)", at: 1_000 + Int64(index))) }
        let text = log.text(since: 0)
        #expect(log.bytes <= 400 && text.contains("line 19") && !text.contains("line 0\n"), "\(text)")
        #expect(log.text(since: 1_018, until: 1_019).split(separator: "\n").map { $0.hasSuffix("line 18") } == [true])
        // Through its logger a message is redacted before it is kept, and two lines become one.
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvbWFyIn0.c2lnbmF0dXJl"
        let logger = log.logger(label: "sdk")
        logger.info("hello with \(token)\nsecond line")
        let last = log.text(since: 0).split(separator: "\n").last ?? ""
        #expect(last.hasSuffix("[sdk] hello with [redacted] second line") && !log.text(since: 0).contains(token), "\(last)")
        logger.trace("below the level")
        #expect(!log.text(since: 0).contains("below the level"))
    }

    @Test func aFileKeepsTheLinesAcrossRunsAndTellsARunThatDidNotEnd() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-client-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let first = ClientLog(file: file)
        #expect(first.previousRunEnded == nil && first.previousRun.isEmpty)
        first.keep(record("joined salon", at: 1_000))
        first.keep(record("crashing", at: 2_000, level: .error))
        // Killed: no close.
        let second = ClientLog(file: file)
        #expect(second.previousRunEnded == false)
        #expect(second.previousRun.contains("[app] joined salon\n") && second.previousRun.hasSuffix("[app] crashing\n"))
        #expect(second.text(since: 0, until: 1_500).hasSuffix("[app] joined salon\n"))
        second.keep(record("back", at: 3_000))
        second.close()
        let third = ClientLog(file: file)
        #expect(third.previousRunEnded == true && third.previousRun.hasSuffix("[app] back\n") && !third.previousRun.contains("crashing"))
        #expect(third.text(since: 0).contains("crashing") && third.text(since: 0).contains("back"))
        third.close()

        // Written anew past twice its capacity, the file still knows where the run began.
        let small = ClientLog(capacity: 300, file: file)
        for index in 0..<50 { small.keep(record("filler \(index)", at: 10_000 + Int64(index))) }
        let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? 0
        #expect(size <= 700, "\(size) bytes")
        let after = ClientLog(capacity: 300, file: file)
        #expect(after.previousRunEnded == false && after.previousRun.hasSuffix("filler 49\n") && !after.previousRun.contains("back"))
    }
}
