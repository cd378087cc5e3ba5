// Creates Kafka topics (1 partition, replication 1) that do not exist yet, in one JVM.
// Usage: java -cp '<kafka libs>/*' CreateTopics.java BOOTSTRAP TOPIC...   (Java 11+ single-file launch)
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.clients.admin.*;

public class CreateTopics {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(p)) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> todo = Arrays.stream(args).skip(1).distinct()
                .filter(t -> !existing.contains(t))
                .map(t -> new NewTopic(t, 1, (short) 1))
                .collect(Collectors.toList());
            if (!todo.isEmpty()) admin.createTopics(todo).all().get();
            System.out.println("created " + todo.size() + " topic(s), " + (args.length - 1 - todo.size()) + " existed");
        }
    }
}
