import MajlisServer
import Synchronization
import Testing

/// The server's services start in order and stop in reverse, each once; a start that fails
/// leaves nothing running.
struct ServiceGroupTests {
    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct Refused: Error {}

    static func group(_ journal: Journal, failing: String? = nil) -> ServiceGroup {
        ServiceGroup(["registry", "media", "sweeper"].map { name in
            ServiceGroup.Service(name, start: {
                if name == failing { throw Refused() }
                journal.note("start \(name)")
            }, stop: { journal.note("stop \(name)") })
        })
    }

    @Test func startsInOrderAndStopsInReverseOnce() throws {
        let journal = Journal()
        let group = Self.group(journal)
        try group.start()
        try group.start()
        group.stop("sweeper")
        group.stop()
        group.stop()
        #expect(journal.all == ["start registry", "start media", "start sweeper", "stop sweeper", "stop sweeper", "stop media", "stop registry"])
    }

    @Test func aFailedStartStopsWhatStartedAndMayBeTriedAgain() throws {
        let journal = Journal()
        let group = Self.group(journal, failing: "sweeper")
        #expect(throws: Refused.self) { try group.start() }
        group.stop()
        #expect(journal.all == ["start registry", "start media", "stop media", "stop registry"])
    }
}
