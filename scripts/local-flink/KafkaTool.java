// Kafka helper for scripts/local-flink.sh, one JVM per call (Java 11+ single-file launch):
//   java -cp '<kafka libs>/*' KafkaTool.java create BOOTSTRAP TOPIC...   create missing topics (1 partition, RF 1)
//   java -cp '<kafka libs>/*' KafkaTool.java offsets BOOTSTRAP TOPIC...  print "topic<TAB>records" (end offset
//                                                                        summed over partitions; -1: no topic)
import java.util.*;
import java.util.stream.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.TopicPartition;

public class KafkaTool {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        List<String> topics = Arrays.stream(args).skip(2).distinct().collect(Collectors.toList());
        try (Admin admin = Admin.create(p)) {
            Set<String> existing = admin.listTopics().names().get();
            if (args[0].equals("create")) {
                List<NewTopic> todo = topics.stream().filter(t -> !existing.contains(t))
                    .map(t -> new NewTopic(t, 1, (short) 1)).collect(Collectors.toList());
                if (!todo.isEmpty()) admin.createTopics(todo).all().get();
                System.out.println("created " + todo.size() + " topic(s), " + (topics.size() - todo.size()) + " existed");
                return;
            }
            for (String t : topics) {
                if (!existing.contains(t)) { System.out.println(t + "\t-1"); continue; }
                TopicDescription d = admin.describeTopics(List.of(t)).allTopicNames().get().get(t);
                Map<TopicPartition, OffsetSpec> req = new HashMap<>();
                d.partitions().forEach(pi -> req.put(new TopicPartition(t, pi.partition()), OffsetSpec.latest()));
                long sum = 0;
                for (var e : admin.listOffsets(req).all().get().values()) sum += e.offset();
                System.out.println(t + "\t" + sum);
            }
        }
    }
}
