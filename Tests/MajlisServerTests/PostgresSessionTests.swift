import Foundation
import Synchronization
import MajlisTestSupport
import Testing

@testable import MajlisServer

/// What a node's PostgreSQL sessions ask of the server, tried on a real one.
@Suite struct PostgresSessionTests {
    final class Outcome: Sendable { let text = Mutex("") }

    /// A node paused inside a transaction that holds a room's fence (SIGSTOP, a frozen VM) does
    /// not keep the room from the node taking it over: the server ends the idle session, the
    /// other node's fence goes through, and the paused node's commit fails when it wakes
    /// (nothing it did is acknowledged). Its store works again at its next statement.
    @Test func aNodePausedInATransactionDoesNotHoldItsRoom() async throws {
        let place = try await StoreBackend.postgres.place()
        let paused = try Store(postgres: place)
        let other = try Store(postgres: place)
        let fence = try paused.takeFence("majlis")

        let locked = DispatchSemaphore(value: 0)
        let takenOver = DispatchSemaphore(value: 0)
        let woke = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        Thread.detachNewThread {
            do {
                try paused.writing { db in
                    try db.transaction {
                        try Store.check(fence: fence, room: "majlis", in: db)  // holds the fence's row
                        locked.signal()
                        // Paused: nothing sent until the other node has the room (or a minute).
                        _ = takenOver.wait(timeout: .now() + 60)
                    }
                }
                outcome.text.withLock { $0 = "committed" }
            } catch {
                outcome.text.withLock { $0 = "refused: \(error)" }
            }
            woke.signal()
        }
        let newer: Int64? = await offPool {
            locked.wait()
            // Waits on the paused node's row lock until the server ends its session.
            let taken = try? other.takeFence("majlis")
            takenOver.signal()
            woke.wait()
            return taken
        }
        #expect(newer == fence + 1)
        let result = outcome.text.withLock { $0 }
        #expect(result.hasPrefix("refused"), "the paused node's transaction: \(result)")
        // The paused node's store reconnects, and sees the room taken.
        #expect(try paused.fence(of: "majlis") == fence + 1)
    }

    /// A connection that sat idle while PostgreSQL restarted serves the next statement: the
    /// server's goodbye is read before it, so it is opened again rather than failing the first
    /// op after an outage.
    @Test func anIdleConnectionOutlivesARestartOfTheServer() async throws {
        let server = try await offPool { try PostgresServer() }  // its own: it is restarted
        defer { server.stop() }
        let database = try PostgresDatabase(url: try server.makeDatabase())
        #expect(try database.query("SELECT 1", []) == [[.int(1)]])
        try await offPool {
            try server.halt()
            try server.start()
        }
        #expect(try database.query("SELECT 2", []) == [[.int(2)]])
    }
}
