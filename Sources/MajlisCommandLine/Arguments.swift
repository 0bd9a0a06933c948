import Foundation

/// Command-line flags of one subcommand: `--name value`, `--name=value` and bare `--switch`.
/// A flag missing from the command line may come from the environment as `MAJLIS_<NAME>`
/// (upper case, dashes as underscores); the command line wins.
public struct Arguments {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    private var values: [String: String] = [:]
    private var switches: Set<String> = []
    public private(set) var positional: [String] = []
    private var used: Set<String> = []
    /// A flag that ended the command line without the value it would need: told apart later as
    /// a flag missing its value (a known one) or a typo (an unknown one).
    private var dangling: String?
    private let environment: [String: String]
    /// Settings from a configuration file (`loadConfiguration`): below the command line and the environment.
    private var fileValues: [String: String] = [:]
    private var configurationFile: String?

    public init(_ arguments: [String], switches known: Set<String> = [], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.environment = environment
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" {
                switches.insert("help")
                continue
            }
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                values[String(name[..<equals])] = String(name[name.index(after: equals)...])
                continue
            }
            if known.contains(name) || name == "help" {
                switches.insert(name)
                continue
            }
            guard index < arguments.count else {
                dangling = name
                break
            }
            values[name] = arguments[index]
            index += 1
            name = ""
        }
    }

    public mutating func string(_ name: String) -> String? {
        used.insert(name)
        if let value = values[name] { return value }
        return environment["MAJLIS_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] ?? fileValues[name]
    }

    /// Reads settings from `path`: one `flag = value` a line (the flag's name without its dashes;
    /// a switch is `flag = true`), `#` starts a comment. The command line and the environment win.
    public mutating func loadConfiguration(_ path: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw Failure(description: "cannot read the configuration file \(path)") }
        configurationFile = path
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
            if line.isEmpty { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw Failure(description: "\(path):\(number + 1): expected NAME = VALUE, not '\(line)'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !name.isEmpty, !name.hasPrefix("-") else { throw Failure(description: "\(path):\(number + 1): a setting is named without dashes, like listen = 0.0.0.0:7880") }
            fileValues[name] = value
        }
    }

    public mutating func string(_ name: String, default value: String) -> String { string(name) ?? value }

    public mutating func int(_ name: String, default value: Int, range: ClosedRange<Int> = 0...Int.max) throws -> Int {
        guard let text = string(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw Failure(description: "--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    public mutating func flag(_ name: String) -> Bool {
        used.insert(name)
        if switches.contains(name) { return true }
        if let value = values[name] { return value == "1" || value == "true" }
        let env = environment["MAJLIS_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] ?? fileValues[name]
        return env == "1" || env == "true"
    }

    public var wantsHelp: Bool { switches.contains("help") }

    /// Fails on flags that no one asked for (typos), and on a known flag left without its value.
    public func rejectUnknown() throws {
        let unknown = Set(values.keys).union(switches).union(dangling.map { [$0] } ?? []).subtracting(used).subtracting(["help"])
        if let name = unknown.sorted().first { throw Failure(description: "unknown flag --\(name)") }
        if let name = Set(fileValues.keys).subtracting(used).sorted().first, let configurationFile {
            throw Failure(description: "unknown setting '\(name)' in \(configurationFile)")
        }
        if let dangling { throw Failure(description: "--\(dangling) needs a value") }
    }

    /// A flag given that looks like a misspelling of one of `names` (at most two letters off),
    /// and the one it was likely meant to be: said when a required flag is missing.
    public func misspelling(of names: [String]) -> (given: String, meant: String)? {
        for given in Set(values.keys).union(switches).subtracting(used).sorted() {
            if let meant = names.first(where: { Self.distance(given, $0) <= 2 }) { return (given, meant) }
        }
        return nil
    }

    /// Levenshtein distance (letters inserted, removed or changed).
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    /// Fails on words that are not flags where a command takes none, after naming unknown flags
    /// (a misspelled switch takes the next word as its value).
    public func rejectPositional(_ command: String) throws {
        try rejectUnknown()
        if let stray = positional.first { throw Failure(description: "unexpected argument '\(stray)' (see majlis \(command) --help)") }
    }

    /// Splits "HOST:PORT".
    public static func hostPort(_ text: String, flag: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw Failure(description: "--\(flag) must be HOST:PORT, not '\(text)'")
        }
        let host = String(text[..<colon])
        guard !host.isEmpty else { throw Failure(description: "--\(flag) needs a host in '\(text)'") }
        return (host, port)
    }
}
