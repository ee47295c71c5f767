{{- /* The volume types Pod Security's restricted level refuses, as a CEL list: every volume
source of the CRDs' pod template but configMap, csi, downwardAPI, emptyDir, ephemeral,
persistentVolumeClaim, projected and secret (hostPath has its own rule and exceptions).
tests/chart/test_helm_graph_policy.py keeps it equal to the CRDs' list. */}}
{{- define "syncagent.graphPolicy.restrictedVolumes" -}}
['awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'fc', 'flexVolume',
'flocker', 'gcePersistentDisk', 'gitRepo', 'glusterfs', 'image', 'iscsi', 'nfs',
'photonPersistentDisk', 'portworxVolume', 'quobyte', 'rbd', 'scaleIO', 'storageos',
'vsphereVolume']
{{- end }}
