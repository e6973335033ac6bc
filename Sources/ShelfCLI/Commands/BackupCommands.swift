import Foundation
import Shelf

/// `shelf backup --to FILE`: one consistent copy of the store and its secret key, taken while
/// the library is in use, with a progress bar.
struct BackupCommand: Command {
    static let name = "backup"
    static let abstract = "Copy the library (store and secret key) into one file while it is in use; restore it with `shelf restore`."
    static let synopsis = "--to FILE [--step PAGES] [--json]"

    let destination: URL
    let step: Int

    init(arguments: inout Arguments) throws {
        guard let to = try arguments.option("--to") else { throw UsageError("backup needs --to FILE") }
        destination = URL(fileURLWithPath: to)
        step = try arguments.intOption("--step", in: 1...1_000_000) ?? 1_024
        guard try arguments.positionals().isEmpty else { throw UsageError("backup takes no arguments; name the file with --to FILE") }
    }

    func run(library: Library, output: Output) async throws {
        let destination = destination
        let step = step
        let report = try await runInterruptible(label: "backup", cancelledMessage: "backup stopped; no file was written") { report in
            try await library.backup(to: destination, pagesPerStep: step) { progress in report(progress.copiedPages, progress.totalPages) }
        }
        if output.json { return try output.printJSON(report) }
        let key = report.includesSecretKey ? "with the secret key" : "no secret key yet"
        output.line(
            "backed up \(report.trackCount) tracks, \(report.playlistCount) playlists and \(report.userCount) users to \(report.path) "
                + "(\(report.bytes) bytes, schema \(report.schemaVersion), \(key); position \(report.token))")
    }
}

extension BackupCommand {
    static let discussion = """
        Copies the library's store with SQLite's online backup API from one read snapshot, so the file holds the \
        library exactly as it was at one commit, while `shelf serve` and other commands go on reading and writing. \
        The library's secret key (which decrypts stored passwords) goes into the same file, so the file is created \
        readable by its owner only (mode 0600). The copy is checked with `PRAGMA integrity_check` and flushed before \
        it is moved under its name; a failed or interrupted backup leaves no file there. The read mirror is derived \
        and not copied: a restore rebuilds it. `shelf serve` takes backups by itself with `backup-dir` and `backup-keep`.
        """
    static let flags = [
        FlagHelp("--to", "FILE", "The backup file to write (replaced when it exists)."),
        FlagHelp("--step", "PAGES", "Database pages copied per step (1 to 1000000); smaller steps report progress more often.", default: "1024"),
    ]
    static let examples = [
        "shelf backup --to ~/shelf-2026-12-03.shelfbackup", "shelf --library /var/lib/shelf backup --to /srv/backups/shelf.shelfbackup --json",
    ]
}

/// `shelf restore FILE`: a backup made by `shelf backup` becomes the library again, in an empty
/// library directory (or, with --force, after the old one is moved aside); the mirror is rebuilt.
struct RestoreCommand: Command {
    static let name = "restore"
    static let abstract = "Restore a backup made by `shelf backup` into an empty library directory (--force moves a library there aside)."
    static let synopsis = "FILE [--force] [--json]"
    static let words: ValueKind = .file

    let backup: URL
    let force: Bool

    init(arguments: inout Arguments) throws {
        force = arguments.flag("--force")
        let files = try arguments.positionals()
        guard files.count == 1 else { throw UsageError("restore takes one backup FILE") }
        backup = URL(fileURLWithPath: files[0])
    }

    func run(library: Library, output: Output) async throws {
        let report = try await library.restore(from: backup, force: force)
        if report.schemaVersionBefore > 1 { try await completeMirror(library, enable: true) }
        if output.json { return try output.printJSON(report) }
        if let aside = report.movedAside { output.line("moved the library that was there to \(aside)") }
        output.line(
            "restored \(report.trackCount) tracks, \(report.playlistCount) playlists and \(report.userCount) users into \(report.path) "
                + "from \(report.backup)" + (report.backupCreated.map { " (taken \($0))" } ?? ""))
        if report.schemaVersionBefore == 1 {
            output.line("the backup holds a legacy (schema 1) store: run `shelf migrate` before using it")
        } else if report.schemaVersionBefore != report.schemaVersion {
            output.line("migrated from schema \(report.schemaVersionBefore) to \(report.schemaVersion)")
        }
        if !report.restoredSecretKey, report.userCount > 0 {
            output.line("the backup held no secret key: set each user's password again (`shelf user passwd NAME`)")
        }
        output.line("change tokens up to \(report.restoredToken) keep working; later ones answer expired")
    }
}

extension RestoreCommand {
    static let discussion = """
        Checks the backup first (a Shelf backup, `integrity_check` clean, a schema this version reads), then writes \
        the store and the secret key into the library directory under temporary names and publishes them last, and \
        builds the read mirror. The directory must be empty or absent; with --force a directory that is not empty is \
        first renamed to DIR.before-restore-DATE (and renamed back if the restore fails). A backup from an older \
        schema is migrated when it is opened. The restored store gets a new store ID that remembers the old one: sync \
        clients' change tokens up to the backup's position keep working, and tokens from after it answer "expired", \
        because the restore undid those changes. Stop `shelf serve` on the library before restoring into it.
        """
    static let flags = [FlagHelp("--force", nil, "Move a library directory that is not empty aside (DIR.before-restore-DATE) first.")]
    static let examples = [
        "shelf --library ~/.local/share/shelf restore ~/shelf-2026-12-03.shelfbackup",
        "shelf --library /var/lib/shelf restore /srv/backups/shelf.shelfbackup --force --json",
    ]
}
