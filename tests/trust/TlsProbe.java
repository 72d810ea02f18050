// A TLS client that trusts what Java trusts by default (the trustStore of
// javax.net.ssl.trustStore, else the JRE's cacerts): exit 0 when the
// handshake with localhost:PORT succeeds and the name matches, else 1.
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

public class TlsProbe {
	public static void main(String[] args) {
		SSLSocketFactory factory = (SSLSocketFactory) SSLSocketFactory.getDefault();
		try (SSLSocket socket = (SSLSocket) factory.createSocket("localhost",
				Integer.parseInt(args[0]))) {
			SSLParameters params = socket.getSSLParameters();
			params.setEndpointIdentificationAlgorithm("HTTPS");
			socket.setSSLParameters(params);
			socket.setSoTimeout(10000);
			socket.startHandshake();
		} catch (Exception e) {
			System.err.println(e);
			System.exit(1);
		}
	}
}
