import Foundation

extension ServeCommand {
    /// SIGTERM and SIGINT for the server: blocked in `main` before any thread starts (every thread
    /// inherits the mask, so none is lost or takes the default action while the server starts),
    /// then taken by one thread with `sigwait`, which runs `stop` once.
    enum StopSignals {
        static func add(to mask: inout sigset_t) {
            sigaddset(&mask, SIGTERM)
            sigaddset(&mask, SIGINT)
        }

        /// Starts the thread that waits for the first of them (one already pending is taken at once).
        static func wait(then stop: @escaping @Sendable () -> Void) {
            let thread = Thread {
                var mask = sigset_t()
                sigemptyset(&mask)
                add(to: &mask)
                var number: Int32 = 0
                while sigwait(&mask, &number) != 0 {}
                stop()
            }
            thread.name = "majlis-signals"
            thread.start()
        }
    }
}
