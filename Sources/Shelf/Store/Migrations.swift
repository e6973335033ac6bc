import Foundation
import ShelfDatabase

/// Named, ordered steps from one `PRAGMA user_version` to the next; each runs in one transaction
/// and sets the version it reaches in that same transaction.
enum Migrations {
    struct Step: Sendable {
        let name: String
        let from: Int
        let to: Int
        let apply: @Sendable (Connection) throws -> Void
    }

    /// A new file (version 0) goes to version 2, then on like any older store. Version 1 → 2 moves
    /// inline artwork out in resumable chunks and is run by its own migrator, not here.
    static let steps: [Step] = [
        Step(name: "createVersion2", from: 0, to: 2) { db in
            try db.execute(script: Schema.version2)
            try db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", [UUID().uuidString])
            try db.execute("INSERT INTO meta (key, value) VALUES ('created', ?)", [ISO8601DateFormatter().string(from: Date())])
        },
        Step(name: "addUsers", from: 2, to: 3) { db in
            try db.execute(script: Schema.version3Additions)
        },
        Step(name: "addGroupStars", from: 3, to: 4) { db in
            try db.execute(script: Schema.version4Additions)
        },
        Step(name: "addPlayQueues", from: 4, to: 5) { db in
            try db.execute(script: Schema.version5Additions)
        },
        Step(name: "addTrackDetails", from: 5, to: 6) { db in
            try db.execute(script: Schema.version6Additions)
        },
        Step(name: "addSidecars", from: 6, to: 7) { db in
            try db.execute(script: Schema.version7Additions)
        },
        Step(name: "addBookmarksRadioSharesGroupLog", from: 7, to: 8) { db in
            try db.execute(script: Schema.version8Additions)
            // `group_log` starts here: tokens from before cannot learn which albums went away.
            try db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('group_log_start', (SELECT coalesce(max(id), 0) FROM change_transaction))")
        },
        Step(name: "addPodcasts", from: 8, to: 9) { db in
            try db.execute(script: Schema.version9Additions)
        },
        Step(name: "addMissingTracksAndRoots", from: 9, to: 10) { db in
            try db.execute(script: Schema.version10Additions)
        },
        Step(name: "addLibraries", from: 10, to: 11) { db in
            try db.execute(script: Schema.version11Additions)
            try db.execute("INSERT INTO library (id, name, created) VALUES (1, 'Music', ?)", [Date().timeIntervalSince1970])
            try db.execute("UPDATE music_root SET library_id = 1")
        },
        Step(name: "addListensAndScrobbling", from: 11, to: 12) { db in
            try db.execute(script: Schema.version12Additions)
        },
        Step(name: "addSonicAnalysis", from: 12, to: 13) { db in
            try db.execute(script: Schema.version13Additions)
        },
        Step(name: "addPlaylistComments", from: 13, to: 14) { db in
            try db.execute(script: Schema.version14Additions)
        },
        Step(name: "tellNamesApartByIdentity", from: 14, to: 15) { db in
            try IdentityMigration.apply(db)
        },
        Step(name: "addTrackLyrics", from: 15, to: 16) { db in
            try db.execute(script: Schema.version16Additions)
        },
        Step(name: "tellReleasesApart", from: 16, to: 17) { db in
            try IdentityMigration.apply(db, before: \.withoutRelease)
        },
        Step(name: "tellArtistsApartByMusicBrainzID", from: 17, to: 18) { db in
            try IdentityMigration.apply(db, before: \.withoutArtistID)
        },
    ]

    /// Applies every step from `version` up to `Schema.currentVersion`.
    static func run(on db: Connection, from version: Int) throws {
        var version = version
        while version < Schema.currentVersion {
            guard let step = steps.first(where: { $0.from == version }) else {
                throw LibraryError.migrationRequired(path: db.path, from: version)
            }
            try db.transaction(.immediate) {
                // Re-read inside the write lock: another process may have migrated meanwhile.
                let current = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
                guard current == step.from else { return }
                try step.apply(db)
                try db.execute(script: "PRAGMA user_version = \(step.to)")
            }
            version = try db.scalar(Int.self, "PRAGMA user_version") ?? step.to
        }
    }
}
