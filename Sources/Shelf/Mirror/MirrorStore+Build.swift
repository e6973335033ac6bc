import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase

extension MirrorStore {
    /// Prepares a build (`fresh` discards whatever file is there first) and, when builds run in
    /// the background or `launch` asks, starts it; otherwise it waits for `complete`.
    func startBuild(fresh: Bool, launch: Bool = false) throws {
        if fresh { closeAndDelete() } else { stopServing() }
        let db = try openWriter()
        let meta = try readMeta(db)
        if fresh || meta["state"] != "building" {
            try db.transaction {
                // A contentless index cannot DELETE; 'delete-all' empties it.
                try db.execute(
                    script:
                        "DELETE FROM mirror_track; DELETE FROM mirror_section; DELETE FROM mirror_playlist_item; DELETE FROM mirror_group; DELETE FROM mirror_group_section; DELETE FROM mirror_group_pending; DELETE FROM mirror_value; DELETE FROM mirror_value_recent; DELETE FROM mirror_value_text; DELETE FROM mirror_list; INSERT INTO mirror_search (mirror_search) VALUES ('delete-all');"
                )
                try setMeta(
                    db,
                    [
                        "store_id": storeID.uuidString, "schema": String(MirrorSchema.version), "state": "building",
                        "build_start_seq": String(try currentSeq()), "build_next_id": "0", "build_rows": "0",
                        "build_phase": MirrorBuildPhase.rows.rawValue, "applied_seq": "0",
                    ])
            }
        }
        state = .building
        buildTask = nil
        if launch || buildsInBackground { try launchBuild() }
    }

    /// Runs the prepared build from the phase and step on disk, off the actor.
    private func launchBuild(observer: (@Sendable (MirrorBuildProgress) -> Void)? = nil) throws {
        control.cancelled.withLock { $0 = true }
        let control = BuildControl(chunkSize: chunkSize)
        control.observer.withLock { $0 = observer }
        self.control = control
        let mirrorPath = path.path
        let canonicalPath = canonicalPath
        let options = options
        buildTask = Task.detached {
            do {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    DispatchQueue.global(qos: .utility).async {
                        continuation.resume(
                            with: Result {
                                try MirrorBuilder(mirrorPath: mirrorPath, canonicalPath: canonicalPath, options: options, control: control).run()
                            })
                    }
                }
            } catch {
                // The next `complete` (or open) resumes from the file instead of rethrowing this.
                await self.buildEnded(control)
                throw error
            }
            try await self.finishBuild(control: control)
        }
    }

    /// Brings a building mirror to ready, resuming a build where the file left it (or starting
    /// one), reporting each chunk and phase to `progress`; cancelling stops the build at its next
    /// step, which the next call resumes. A disabled mirror is left alone.
    /// A build may end by starting another (the log was compacted under it, or grew past the
    /// replay limit); the loop runs that one too, with the same observer and cancellation. Where
    /// builds run in the background, a cancelled caller does not stop the build: it is the
    /// library's, not the caller's, and the caller waits for the step in progress to end.
    func complete(progress: (@Sendable (MirrorBuildProgress) -> Void)?) async throws {
        let cancel = Locked<(requested: Bool, control: BuildControl?)>((false, nil))
        let cancelsBuild = !buildsInBackground
        try await withTaskCancellationHandler {
            while state == .building {
                if buildTask == nil { try launchBuild(observer: progress) } else { control.observer.withLock { $0 = progress } }
                let current = control
                defer { current.observer.withLock { $0 = nil } }
                let requested = cancel.withLock { state in
                    state.control = current
                    return state.requested
                }
                if requested {
                    if cancelsBuild { current.cancelled.withLock { $0 = true } }
                    throw CancellationError()
                }
                try await waitForBuild()
            }
        } onCancel: {
            cancel.withLock { state in
                state.requested = true
                if cancelsBuild { state.control?.cancelled.withLock { $0 = true } }
            }
        }
    }

    /// Waits for a running build to finish (tests and `shelf mirror build`).
    /// A build that finds the log compacted under it starts another; waiting follows it.
    func waitForBuild() async throws {
        while let task = buildTask {
            do {
                try await task.value
            } catch {
                // Stopped (Ctrl-C) or failed: the file keeps every finished step, and the next
                // build resumes from them instead of waiting on this task again.
                if buildTask == task { buildTask = nil }
                throw error
            }
            if buildTask == nil || buildTask == task { return }
        }
    }

    /// Forgets a build that stopped or failed, unless a newer one has replaced it.
    private func buildEnded(_ control: BuildControl) {
        if control === self.control { buildTask = nil }
    }

    /// The last step of a build, on the actor so that no write slips between the replay and the
    /// switch to `ready`: replays the change log from where the build started.
    private func finishBuild(control: BuildControl) throws {
        // A newer build replaced this one (its waiters follow that one), or the mirror was
        // turned off; a build stopped on request (Ctrl-C after its last step) is not finished.
        guard control === self.control, state == .building else { return }
        if control.isCancelled {
            buildTask = nil
            throw CancellationError()
        }
        let db = try openWriter()
        // The file's start point: the builder moves it up when it copies its first chunk.
        let startSeq = Int64(try readMeta(db)["build_start_seq"] ?? "0") ?? 0
        appliedSeq = startSeq
        try db.transaction {
            try setMeta(db, ["state": "ready", "applied_seq": String(startSeq), "build_phase": "", "build_next_id": "0"])
        }
        state = .ready
        if try !catchUp() { return }
        buildTask = nil
        readers = ReadPool(path: path.path, size: readerCount, busyTimeoutMilliseconds: 5_000)
        publish(readers)
    }

    /// Starts again from nothing; `launch` runs the build now, else `complete` (or the
    /// background build) runs it.
    func rebuild(launch: Bool) async throws {
        // A build still running (the one opening started) is stopped at its next step and
        // waited for first: deleting the file under a builder that is opening it fails that
        // builder with an I/O error, or lets it write into the new file.
        if let running = buildTask {
            control.cancelled.withLock { $0 = true }
            _ = try? await running.value
        }
        try setEnabled(true)
        try startBuild(fresh: true, launch: launch)
    }
}
