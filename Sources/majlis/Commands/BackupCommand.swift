import Foundation
import MajlisCommandLine
import MajlisServer

/// `majlis backup`: an online copy of the SQLite store.
enum BackupCommand {
    static let help = """
        usage: majlis backup --to FILE [--data DIR]
        Copies the store in --data (default ./majlis-data) to FILE, a new file, consistently, while the
        server runs (SQLite's VACUUM INTO: one read transaction; the server goes on writing). To restore: stop
        the server, put FILE in the data directory as majlis.sqlite (removing majlis.sqlite-wal and -shm), start
        it (docs/deploy.md).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let data = args.string("data", default: "./majlis-data")
        guard let target = args.string("to") else { throw Arguments.Failure(description: "--to FILE is required (see majlis backup --help)") }
        try args.rejectPositional("backup")
        do {
            let schema = try Store.backup(directory: data, to: target)
            say("backed up \((data as NSString).appendingPathComponent("majlis.sqlite")) to \(target) (schema \(schema))")
        } catch {
            throw Arguments.Failure(description: "\(error)")
        }
        return 0
    }
}
