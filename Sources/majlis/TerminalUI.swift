/// `majlis join --tui` (filled in below).
enum TerminalUI {
    static func run(_ options: JoinOptions) throws -> Int32 {
        throw Arguments.Failure(description: "--tui is not built yet")
    }
}
