import Foundation
import MajlisCommandLine
import MajlisServer

/// `majlis migrate`: moves the SQLite store of a data directory into PostgreSQL.
enum MigrateCommand {
    static let help = """
        usage: majlis migrate --postgres URL [--data DIR]
        Copies everything the store in --data (default ./majlis-data) holds (rooms and their settings, bans, chat
        history, idempotency keys, the webhook outbox) into the PostgreSQL database at URL
        (postgres://USER:PASSWORD@HOST:PORT/DATABASE), which must hold no Majlis data yet: one transaction on
        each side, every table counted on arrival; nothing is changed in --data. Stop the server first (what it
        wrote after the copy would not be in PostgreSQL), then start it with --postgres URL (and the same --data,
        which keeps this node's DTLS certificate and development secret).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let data = args.string("data", default: "./majlis-data")
        guard let url = args.string("postgres") else { throw Arguments.Failure(description: "--postgres URL is required (see majlis migrate --help)") }
        try args.rejectPositional("migrate")
        let file = (data as NSString).appendingPathComponent("majlis.sqlite")
        guard FileManager.default.fileExists(atPath: file) else { throw Arguments.Failure(description: "no store at \(file)") }
        guard !DataLock.isServed(data) else {
            throw Arguments.Failure(description: "majlis serve is running on \(data): stop it first (what it writes after the copy would not be in PostgreSQL)")
        }
        do {
            let source = try Store(directory: data)
            let target = try Store(postgres: url)
            let counts = try source.copy(to: target)
            say("copied \(file) into \(target.path):")
            for (table, rows) in counts { say("  \(table): \(rows) rows") }
        } catch {
            throw Arguments.Failure(description: "\(error)")
        }
        return 0
    }
}
