import Foundation

/// Polls `value` until it gives something (up to 30 s); nil if it never does.
func eventually<T>(_ value: () -> T?) async -> T? {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
        if let found = value() { return found }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return nil
}
