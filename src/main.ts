console.log('Parley: bootstrap arrives with the service foundation.');
