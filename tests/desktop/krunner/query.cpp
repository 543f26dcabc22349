// krunner-query QUERY [--runner ID] [--run ACTION]
//
// Launches QUERY on the runners libKF5Runner finds (D-Bus runners from
// krunner/dbusplugins in the XDG data dirs), prints the loaded runners' ids as one
// JSON line, {"runners": [...]}, then one JSON line per match: id, text,
// subtext, type, relevance, runner and the ids of the actions it offers. With
// --runner, only that runner is allowed. With --run, runs the first match with
// ACTION ("" is the match's default action), ends the match session (the runners'
// teardown) and exits once the bus has confirmed every message sent before.
#include <QAction>
#include <QApplication>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <QTimer>

#include <KRunner/AbstractRunner>
#include <KRunner/QueryMatch>
#include <KRunner/RunnerManager>

static void printLine(const QJsonObject &line)
{
    QTextStream out(stdout);
    out << QJsonDocument(line).toJson(QJsonDocument::Compact) << Qt::endl;
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);  // QAction (the runners' actions) needs a QApplication
    QStringList args = app.arguments().mid(1);
    if (args.isEmpty()) {
        QTextStream(stderr) << "usage: krunner-query QUERY [--runner ID] [--run ACTION]\n";
        return 64;
    }
    const QString query = args.takeFirst();
    QString runnerId;
    QString action;
    bool run = false;
    while (args.size() >= 2) {
        const QString flag = args.takeFirst();
        const QString value = args.takeFirst();
        if (flag == QLatin1String("--runner")) {
            runnerId = value;
        } else if (flag == QLatin1String("--run")) {
            run = true;
            action = value;
        } else {
            QTextStream(stderr) << "unknown option " << flag << "\n";
            return 64;
        }
    }
    if (!args.isEmpty()) {
        QTextStream(stderr) << "option without a value: " << args.first() << "\n";
        return 64;
    }

    Plasma::RunnerManager manager;
    if (!runnerId.isEmpty()) {
        manager.setAllowedRunners({runnerId});
    }
    QTimer deadline;
    deadline.setSingleShot(true);
    QObject::connect(&deadline, &QTimer::timeout, &app, [&app] {
        printLine({{QStringLiteral("error"), QStringLiteral("no queryFinished within 20 s")}});
        app.exit(2);
    });
    deadline.start(20000);

    QObject::connect(&manager, &Plasma::RunnerManager::queryFinished, &app, [&] {
        deadline.stop();
        QJsonArray loaded;  // loaded by the query: the runners found and allowed
        for (Plasma::AbstractRunner *runner : manager.runners()) {
            loaded.append(runner->id());
        }
        printLine({{QStringLiteral("runners"), loaded}});
        const QList<Plasma::QueryMatch> matches = manager.matches();
        for (const Plasma::QueryMatch &match : matches) {
            QJsonArray actions;
            for (QAction *a : manager.actionsForMatch(match)) {
                actions.append(a->data().toString());
            }
            printLine({
                {QStringLiteral("id"), match.id()},
                {QStringLiteral("text"), match.text()},
                {QStringLiteral("subtext"), match.subtext()},
                {QStringLiteral("type"), int(match.type())},
                {QStringLiteral("relevance"), match.relevance()},
                {QStringLiteral("runner"), match.runner() ? match.runner()->id() : QString()},
                {QStringLiteral("actions"), actions},
            });
        }
        int status = 0;
        if (run) {
            if (matches.isEmpty()) {
                printLine({{QStringLiteral("error"), QStringLiteral("no match to run")}});
                status = 1;
            } else {
                Plasma::QueryMatch match = matches.first();
                bool found = action.isEmpty();
                for (QAction *a : manager.actionsForMatch(match)) {
                    if (a->data().toString() == action) {
                        match.setSelectedAction(a);
                        found = true;
                    }
                }
                if (!found) {
                    printLine({{QStringLiteral("error"), QStringLiteral("the first match has no action ") + action}});
                    status = 1;
                } else {
                    manager.run(match);
                    printLine({{QStringLiteral("ran"), match.id()}, {QStringLiteral("action"), action}});
                }
            }
        }
        manager.matchSessionComplete();  // the runners' teardown
        // The runner sends Run without waiting (QDBus::NoBlock) and Teardown
        // asynchronously: a reply from the bus to a later message means they left.
        QDBusConnection::sessionBus().interface()->isServiceRegistered(QStringLiteral("org.freedesktop.DBus"));
        app.exit(status);
    });

    manager.launchQuery(query);
    return app.exec();
}
