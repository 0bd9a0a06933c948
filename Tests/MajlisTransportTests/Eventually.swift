import Foundation

/// Polls `value` until it gives something (up to 30 s); nil if it never does. It looks once more
/// after the deadline: a test whose task was starved past the deadline (the suite's first
/// seconds on a two-core machine) still finds what happened meanwhile.
func eventually<T>(_ value: () -> T?) async -> T? {
    let deadline = Date().addingTimeInterval(30)
    while true {
        if let found = value() { return found }
        if Date() > deadline { return nil }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
